import AuthProtocol
import AuthTestSupport
import Foundation
import Testing

/// The token request read byte by byte and its answer written by hand, against the ordinary
/// decoder and encoder, which stay the reference for what a line means.
@Suite struct TokenLineTests {
    /// What the ordinary path reads from `line`: nil when it is not a `session.token` request with
    /// an id and valid params.
    private func decoded(_ line: String) -> TokenRequestLine.Reading? {
        guard case .success(let envelope) = RPCCodec.decodeEnvelope(Data(line.utf8)), envelope.method == Methods.Token.name,
              let id = envelope.id, let parameters = try? RPCCodec.decodeParams(Methods.Token.Parameters.self, from: envelope.raw) else { return nil }
        return .init(id: id, profile: parameters.profile, minValidity: parameters.minValidity, aal: parameters.aal)
    }

    private func read(_ line: String) -> TokenRequestLine.Reading? {
        TokenRequestLine(Array(line.utf8)).map { .init(id: $0.id, profile: $0.parameters.profile, minValidity: $0.parameters.minValidity, aal: $0.parameters.aal) }
    }

    @Test func theCommonShapesAreReadAsTheDecoderReadsThem() {
        let lines: [(String, TokenRequestLine.Reading)] = [
            (#"{"jsonrpc":"2.0","id":1,"method":"session.token","params":{}}"#, .init(id: .number(1), profile: nil, minValidity: nil)),
            (#"{"jsonrpc":"2.0","id":7,"method":"session.token"}"#, .init(id: .number(7), profile: nil, minValidity: nil)),
            (#"{"method":"session.token","params":{"min_validity":60,"profile":"work"},"id":"a-1","jsonrpc":"2.0"}"#,
             .init(id: .string("a-1"), profile: "work", minValidity: 60)),
            (" {\t\"jsonrpc\" : \"2.0\" , \"id\" : -9223372036854775808 , \"method\" : \"session.token\" , \"params\" : { \"profile\" : \"p/q\" } }\r",
             .init(id: .number(.min), profile: "p/q", minValidity: nil)),
            (#"{"jsonrpc":"2.0","id":0,"method":"session.token","params":{"min_validity":-5}}"#, .init(id: .number(0), profile: nil, minValidity: -5)),
            // What the Swift client writes for a token that needs a second factor.
            (#"{"id":3,"jsonrpc":"2.0","method":"session.token","params":{"aal":"aal2","min_validity":30}}"#,
             .init(id: .number(3), profile: nil, minValidity: 30, aal: "aal2")),
        ]
        for (line, expected) in lines {
            #expect(read(line) == expected, "\(line)")
            #expect(decoded(line) == expected, "\(line)")
        }
    }

    @Test func everyOtherShapeIsLeftToTheDecoder() {
        let lines = [
            #"{"jsonrpc":"2.0","id":1,"method":"session.status","params":{}}"#,            // another method
            #"{"jsonrpc":"1.0","id":1,"method":"session.token"}"#,                          // another version
            #"{"jsonrpc":"2.0","method":"session.token"}"#,                                  // a notification
            #"{"jsonrpc":"2.0","id":null,"method":"session.token"}"#,                        // null id
            #"{"jsonrpc":"2.0","id":1,"id":2,"method":"session.token"}"#,                    // a key twice
            #"{"jsonrpc":"2.0","id":1,"method":"session.token","extra":true}"#,              // another key
            #"{"jsonrpc":"2.0","id":1,"method":"session.token","params":{"profile":"a\"b"}}"#, // an escape
            #"{"jsonrpc":"2.0","id":1,"method":"session.token","params":{"aal":"aal2","aal":"aal1"}}"#, // aal twice
            #"{"jsonrpc":"2.0","id":1,"method":"session.token","params":{"aal":2}}"#,         // aal not a string
            #"{"jsonrpc":"2.0","id":"\u0031","method":"session.token"}"#,                    // an escaped id
            #"{"jsonrpc":"2.0","id":1.0,"method":"session.token"}"#,                         // a fraction
            #"{"jsonrpc":"2.0","id":1e3,"method":"session.token"}"#,                         // an exponent
            #"{"jsonrpc":"2.0","id":01,"method":"session.token"}"#,                          // a leading zero
            #"{"jsonrpc":"2.0","id":9223372036854775808,"method":"session.token"}"#,         // too big
            #"{"jsonrpc":"2.0","id":1,"method":"session.token","params":{"min_validity":null}}"#,
            #"{"jsonrpc":"2.0","id":1,"method":"session.token","params":[]}"#,
            #"{"jsonrpc":"2.0","id":1,"method":"session.token","params":{"profile":"ü"}}"#,  // not ASCII
            #"{"jsonrpc":"2.0","id":1,"method":"session.token"}}"#,                          // trailing bytes
            #"{"jsonrpc":"2.0","id":1,"method":"session.token""#,                            // cut short
            #"{"jsonrpc":"2.0","id":1,"method":"session.token",}"#,                          // trailing comma
            #"{"jsonrpc":"2.0" "id":1,"method":"session.token"}"#,                           // missing comma
            "",
        ]
        for line in lines { #expect(read(line) == nil, "\(line)") }
    }

    /// Lines cut, spliced and flipped at random from valid ones: whatever the byte reader accepts,
    /// the decoder reads the same way.
    @Test func whateverIsReadTheDecoderReadsTheSame() {
        let seeds = [
            #"{"jsonrpc":"2.0","id":12,"method":"session.token","params":{"profile":"default","min_validity":30}}"#,
            #"{"params":{},"id":"x","method":"session.token","jsonrpc":"2.0"}"#,
            #"{"id":5,"jsonrpc":"2.0","method":"session.token","params":{"aal":"aal2","profile":"w"}}"#,
        ].map { Array($0.utf8) }
        let alphabet = Array(#"{}[]":, 0123456789-.eE\"#.utf8) + [0x09, 0x0D, 0xC3, 0xBC]
        var generator = SplitMix64(seed: 0x5EED)
        var accepted = 0
        for round in 0..<20_000 {
            var bytes = seeds[round % seeds.count]
            for _ in 0..<(1 + Int(generator.next() % 3)) {
                let position = Int(generator.next() % UInt64(bytes.count + 1))
                switch generator.next() % 3 {
                case 0 where position < bytes.count: bytes.remove(at: position)
                case 1: bytes.insert(alphabet[Int(generator.next() % UInt64(alphabet.count))], at: position)
                default: if position < bytes.count { bytes[position] = alphabet[Int(generator.next() % UInt64(alphabet.count))] }
                }
            }
            let line = String(decoding: bytes, as: UTF8.self)
            guard let reading = read(line) else { continue }
            accepted += 1
            #expect(decoded(line) == reading, "\(line)")
        }
        // Some mutations keep the shape (spaces, other digits): the comparison above did happen.
        #expect(accepted > 100, "only \(accepted) mutated lines were read")
    }

    @Test func theAnswerIsByteForByteTheEncoders() throws {
        let result = Methods.Token.Result(accessToken: "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln-_", expiresAt: 1_800_000_000, expiresIn: 3599)
        for id in [RPCID.number(1), .number(-42), .number(.max), .string("a/b c"), .string("")] {
            let written = try #require(TokenAnswerLine.encode(result, id: id))
            #expect(written == Array(try RPCCodec.encodeResult(result, id: id)), "\(id)")
        }
        // A value that needs escaping is left to the encoder: a quote, a backslash, a control
        // character, DEL or anything outside ASCII, wherever it stands.
        #expect(TokenAnswerLine.encode(result, id: .string("a\"b")) == nil)
        for token in ["t\\u", "\tabc", "abc\n", "a\u{7F}b", "caf\u{E9}", String(repeating: "x", count: 100) + "\u{1F}"] {
            #expect(TokenAnswerLine.encode(.init(accessToken: token, expiresAt: 1, expiresIn: 1), id: .number(1)) == nil, "\(Array(token.utf8))")
        }
        // The printable ends, space and tilde, are written as they are.
        let edges = Methods.Token.Result(accessToken: " a~", expiresAt: 1, expiresIn: 1)
        #expect(TokenAnswerLine.encode(edges, id: .number(1)) == Array(try RPCCodec.encodeResult(edges, id: .number(1))))
    }

    @Test func theRequestIsWrittenAsTheEncoderWritesItAndReadBack() throws {
        let cases: [(RPCID, Methods.Token.Parameters)] = [
            (.number(1), .init()), (.number(-3), .init(profile: "work")), (.string("x-9"), .init(minValidity: 0)),
            (.number(.max), .init(profile: "p/q r", minValidity: 86_400)), (.number(4), .init(minValidity: 10, aal: "aal2")),
            (.string("z"), .init(profile: "work", aal: "aal1")),
        ]
        for (id, parameters) in cases {
            let line = TokenRequestLine(id: id, parameters: parameters).encoded
            #expect(line == Array(try RPCCodec.encodeRequest(method: Methods.Token.name, params: parameters, id: id)), "\(id)")
            let read = try #require(TokenRequestLine(Array(line.dropLast())))
            #expect(read.id == id && read.parameters == parameters)
        }
        // A profile the reader cannot take as it is (a quote, a newline, not ASCII) is still
        // written as valid JSON, which the general decoder reads back exactly.
        for profile in ["a\"b", "line\nbreak", "caf\u{E9}", "tab\there\u{1}"] {
            let line = TokenRequestLine(id: .number(2), parameters: .init(profile: profile)).encoded
            #expect(TokenRequestLine(Array(line.dropLast())) == nil)
            #expect(decoded(String(decoding: line.dropLast(), as: UTF8.self)) == .init(id: .number(2), profile: profile, minValidity: nil, aal: nil))
        }
    }

    @Test func theAnswerReaderTakesWhatEitherEncoderWritesAndNothingElse() throws {
        let result = Methods.Token.Result(accessToken: "eyJ.eyJ.sig", expiresAt: 1_800_000_000, expiresIn: 59)
        let written = try #require(TokenAnswerLine.encode(result, id: .number(7)))
        #expect(TokenAnswerLine.decode(Array(written.dropLast()), answering: .number(7)) == result)
        #expect(TokenAnswerLine.decode(Array(try RPCCodec.encodeResult(result, id: .string("s"))).dropLast().map { $0 }, answering: .string("s")) == result)
        let shuffled = #" { "result" : {"token_type":"bearer", "expires_in":59,"expires_at":1800000000,"access_token":"eyJ.eyJ.sig"}, "jsonrpc":"2.0","id":7 } "#
        #expect(TokenAnswerLine.decode(Array(shuffled.utf8), answering: .number(7)) == result)
        let others = [
            String(decoding: written.dropLast(), as: UTF8.self).replacingOccurrences(of: #""id":7"#, with: #""id":8"#), // another request's
            #"{"id":7,"jsonrpc":"2.0","error":{"code":-32000,"message":"not signed in"}}"#,                         // an error
            #"{"id":7,"jsonrpc":"2.0","result":{"access_token":"","expires_at":1,"expires_in":1,"token_type":"bearer"}}"#, // no token
            #"{"id":7,"jsonrpc":"2.0","result":{"access_token":"a"b","expires_at":1,"expires_in":1,"token_type":"bearer"}}"#, // an escape
            #"{"id":7,"jsonrpc":"2.0","result":{"access_token":"a","expires_at":1.5,"expires_in":1,"token_type":"bearer"}}"#, // a fraction
            #"{"id":7,"jsonrpc":"2.0","result":{"access_token":"a","expires_at":1,"token_type":"bearer"}}"#,      // a field missing
            #"{"id":7,"jsonrpc":"2.0","result":{"access_token":"a","expires_at":1,"expires_in":1,"token_type":"bearer"},"error":null}"#,
            #"{"id":7,"jsonrpc":"1.0","result":{"access_token":"a","expires_at":1,"expires_in":1,"token_type":"bearer"}}"#,
        ]
        for line in others { #expect(TokenAnswerLine.decode(Array(line.utf8), answering: .number(7)) == nil, "\(line)") }
    }
}

extension TokenRequestLine {
    /// What a test compares: the id and both parameters.
    struct Reading: Equatable {
        var id: RPCID
        var profile: String?
        var minValidity: Int?
        var aal: String? = nil
    }
}
