import SignInPage
import Testing

/// One page pinned whole, so that a change to the markup is a change someone reads.
@Suite struct SignInPageGoldenTests {
    @Test func theCodePageWithAnErrorUnderTheCodeField() throws {
        let view = SignInPageView(project: .init(name: "Acme Notes", host: "abcd.supabase.co"),
                                  step: .enterCode(.email, destination: "ada@example.com"),
                                  error: .init("That code is not right.", field: .code), csrfToken: "t0ken")
        let html = SignInPageRenderer.render(view)
        let head = try #require(html.firstRange(of: "<style>"))
        #expect(html[..<head.lowerBound] == """
            <!DOCTYPE html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <meta name="referrer" content="same-origin">
            <meta name="color-scheme" content="light dark">
            <title>Sign in with a code – Acme Notes</title>

            """)
        let main = try #require(html.firstRange(of: "<main>")?.lowerBound)
        #expect(html[main...] == """
            <main>
            <header>
            <div class="mark" aria-hidden="true">A</div><p class="project">Acme Notes</p><p class="host">abcd.supabase.co</p>
            </header>
            <div class="card">
            <h1>Enter your code</h1>
            <p class="lead">We emailed a code to <strong>ada@example.com</strong>.</p>
            <form method="post" action="/sign-in/code/verify">
            <input type="hidden" name="csrf_token" value="t0ken">
            <div class="field">
            <label for="f-code">Code</label>
            <input id="f-code" name="code" type="text" autocomplete="one-time-code" inputmode="numeric" required="" autofocus="" autocapitalize="none" spellcheck="false" aria-invalid="true" aria-describedby="error">
            <p id="error" class="error" role="alert">That code is not right.</p>
            </div>
            <button type="submit" class="primary">Sign in</button>
            </form>
            <div class="more">
            <form method="post" action="/sign-in/code/resend">
            <input type="hidden" name="csrf_token" value="t0ken">
            <button type="submit" class="link">Send a new code</button>
            </form>
            <form method="post" action="/sign-in/go">
            <input type="hidden" name="csrf_token" value="t0ken">
            <input type="hidden" name="to" value="choose">
            <button type="submit" class="link">Sign in another way</button>
            </form>
            </div>
            </div>
            <footer>authd signs you in on this computer and keeps the session in your keyring.</footer>
            </main>
            </body>
            </html>

            """)
    }
}
