import AuthCore
import AuthProtocol
import AuthSocketServer
import FoundationEssentials

/// The handlers of every method in `Methods`.
enum DaemonMethods {
    static let capabilities = ["password", "events", "profiles", "sign_up", "otp", "id_token", "oauth_pkce", "user", "captcha", "claims", "reauthenticate", "mfa", "anonymous", "session_take_over", "email_links", "identities", "sso", "interactive_sign_in"]

    /// The answer to `session.token` for `token` at `now`.
    static func tokenResult(_ token: IssuedToken, now: Date) -> Methods.Token.Result {
        let expiresAt = token.expiresAt.timeIntervalSince1970
        return Methods.Token.Result(accessToken: token.accessToken, expiresAt: Int64(saturating: expiresAt, rounding: .down),
                                    expiresIn: max(0, Int64(saturating: expiresAt - now.timeIntervalSince1970, rounding: .down)))
    }

    static func table(registry: ProfileRegistry, apps: AppAccessGate) -> MethodTable {
        var table = MethodTable(admission: { audience, profile, connection throws(RPCErrorObject) in
            try await admit(connection.client, to: audience, profile: profile, registry: registry, apps: apps)
        }, immediateAdmission: { audience, profile, connection in
            // Only a token taker is ever let through at once: an app the gate need not ask about,
            // noted as given a token under the gate's lock.
            guard audience == .tokenTakers, let named = try? registry.profile(profile) else { return false }
            return apps.handOutAtOnce(to: connection.client, profile: named.profile)
        }, resolveProfile: { audience, profile in
            // The methods on a profile's session name the default at once; the user tool's keep
            // their own meaning of none (every profile for apps.list, an error for setDefault).
            switch audience {
            case .profileUsers, .tokenTakers: return profile ?? registry.defaultProfile
            case .everyone, .userTool: return profile
            }
        })

        table.register(Methods.Hello.self, for: .everyone) { _, _ in
            Methods.Hello.Result(protocolVersion: ProtocolVersion.current, daemonVersion: AuthdVersion.string,
                                 capabilities: capabilities, profiles: registry.byName.keys.sorted(),
                                 defaultProfile: registry.defaultProfile)
        }

        table.register(Methods.Status.self, for: .profileUsers) { parameters, _ throws(RPCErrorObject) in
            await (try registry.profile(parameters.profile)).session.status()
        }

        table.register(Methods.Token.self, for: .tokenTakers, now: { parameters, _ in
            guard let profile = try? registry.profile(parameters.profile),
                  let token = profile.session.tokenAtOnce(validFor: TimeInterval(parameters.minValidity ?? 0)),
                  StatusMapper.assuranceError(token: token.accessToken, required: parameters.aal) == nil else { return nil }
            // `expires_in` on the clock that judged the validity: the session's.
            return tokenResult(token, now: profile.session.clock.now())
        }) { parameters, connection throws(RPCErrorObject) in
            let profile = try registry.profile(parameters.profile)
            switch await profile.session.token(validFor: TimeInterval(parameters.minValidity ?? 0)) {
            case .success(let token):
                if let refusal = StatusMapper.assuranceError(token: token.accessToken, required: parameters.aal) { throw refusal }
                apps.noteTokenHandedOut(to: connection.client, profile: profile.profile)
                return tokenResult(token, now: profile.session.clock.now())
            case .failure(let failure):
                throw StatusMapper.error(failure)
            }
        }

        table.register(Methods.SignInWithPassword.self, for: .profileUsers) { parameters, _ throws(RPCErrorObject) in
            let profile = try registry.profile(parameters.profile)
            switch await profile.accounts.signIn(.password(.email(parameters.email), password: parameters.password),
                                                 captchaToken: parameters.captchaToken) {
            case .success: return await profile.session.status()
            case .failure(let failure): throw SignInErrorText.error(failure, method: .password)
            }
        }

        table.register(Methods.SignOut.self, for: .profileUsers) { parameters, _ throws(RPCErrorObject) in
            let profile = try registry.profile(parameters.profile)
            // `validate()` has let through only the scopes there are.
            let scope = parameters.scope.flatMap(SignOutScope.init(rawValue:)) ?? .local
            let outcome = await profile.session.signOut(scope: scope)
            return Methods.SignOut.Result(status: await profile.session.status(), serverConfirmed: outcome.confirmed, serverDetail: outcome.detail)
        }

        // Open to every program: `ServerCheck` keeps any of them from making authd flood the server.
        // authctl (`doctor`, run again once the network is fixed) is answered by a new check.
        table.register(Methods.CheckServer.self, for: .everyone) { parameters, connection throws(RPCErrorObject) in
            await (try registry.profile(parameters.profile)).serverCheck.result(fresh: apps.isUserTool(connection.client))
        }

        table.registerStreaming(Methods.Subscribe.self, for: .profileUsers) { parameters, envelope, connection throws(RPCErrorObject) in
            let profile = try registry.profile(parameters.profile)
            let outbox = connection.outbox
            connection.activity.markSubscribed()
            await profile.session.subscribe(connection.id, acknowledge: {
                // A subscription sent as a notification gets its events, and no answer.
                if let id = envelope.id, let ack = try? RPCCodec.encodeResult(Methods.Subscribe.Result(), id: id) { outbox.send(ack) }
            }, send: { event in
                // Denied since it subscribed: it gets nothing more of the session.
                guard !apps.isDenied(connection.client, profile: profile.profile) else { return }
                if let line = event.line { outbox.send(line) }
            })
        }

        table.register(Methods.ListApps.self, for: .userTool) { parameters, _ throws(RPCErrorObject) in
            let profiles = registry.byName.keys.sorted()
            let only = try parameters.profile.map { name throws(RPCErrorObject) in try registry.profile(name).profile }
            var policies: [String: String] = [:]
            for profile in profiles where only == nil || only == profile { policies[profile] = apps.policy(of: profile).rawValue }
            return Methods.ListApps.Result(apps: await apps.records(profile: only), policies: policies)
        }

        table.register(Methods.DecideApp.self, for: .userTool) { parameters, connection throws(RPCErrorObject) in
            let profile = try registry.profile(parameters.profile)
            // `validate()` has let through only allow and deny; anything but allow denies all the same.
            let decision: AppDecision = parameters.decision == "allow" ? .allowed : .denied
            return try await apps.decide(app: parameters.app, profile: profile.profile, decision: decision, caller: connection.client)
        }

        table.register(Methods.SetDefaultProfile.self, for: .userTool) { parameters, _ throws(RPCErrorObject) in
            // Checked here, not by `validate()`: the parameters are `ProfileParameters`, which
            // leave `profile` out for every other method.
            guard let name = parameters.profile else {
                throw RPCErrorObject(code: RPCErrorObject.invalidParamsCode, message: "invalid params: 'profile' names the profile to make the default")
            }
            let previous = try registry.makeDefault(name)
            return .init(defaultProfile: name, previous: previous)
        }

        registerAccountMethods(&table, registry: registry)
        registerReauthenticate(&table, registry: registry)
        registerClaims(&table, registry: registry)
        registerSecondFactorMethods(&table, registry: registry)
        registerAnonymousAndTakeOverMethods(&table, registry: registry)
        registerIdentityAndSSOMethods(&table, registry: registry)
        registerInteractiveSignInMethods(&table, registry: registry)
        return table
    }

    /// Lets `client` call a method of `audience` on `profile`, or throws why not. An app waits
    /// here for the user's decision under a profile that asks (`AppAccessGate.admit`).
    private static func admit(_ client: ClientIdentity, to audience: MethodAudience, profile: String?,
                              registry: ProfileRegistry, apps: AppAccessGate) async throws(RPCErrorObject) {
        switch audience {
        case .everyone:
            return
        case .userTool:
            guard apps.isUserTool(client) else {
                throw .application(.accessDenied, "only authctl can see, allow or deny apps or change the default profile: run 'authctl apps' or 'authctl profile default'")
            }
        case .profileUsers:
            if apps.isUserTool(client) { return }
            try await apps.admit(client, profile: try registry.profile(profile).profile)
        case .tokenTakers:
            try await apps.admit(client, profile: try registry.profile(profile).profile)
        }
    }
}
