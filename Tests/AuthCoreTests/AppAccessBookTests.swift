import AuthCore
import Foundation
import Testing

/// Which app may take which profile's tokens.
@Suite struct AppAccessBookTests {
    private let editor = AppKey(app: "/usr/bin/editor", profile: "work")

    @Test func aProfileThatDoesNotAskLetsEveryAppThroughUnlessDenied() {
        var book = AppAccessBook()
        #expect(book.verdict(for: editor, asks: false) == .allow)
        book.decide(editor, .denied)
        #expect(book.verdict(for: editor, asks: false) == .deny)
    }

    @Test func aProfileThatAsksHoldsUndecidedAppsAndFollowsTheDecision() {
        var book = AppAccessBook()
        #expect(book.verdict(for: editor, asks: true) == .ask)
        let changed = book.decide(editor, .allowed)
        #expect(changed)
        #expect(book.verdict(for: editor, asks: true) == .allow)
        let changedAgain = book.decide(editor, .allowed)
        #expect(!changedAgain)   // nothing changed: nothing to save
        book.decide(editor, .denied)
        #expect(book.verdict(for: editor, asks: true) == .deny)
        // Decisions are per profile.
        #expect(book.verdict(for: AppKey(app: editor.app, profile: "home"), asks: true) == .ask)
    }

    @Test func onlyTheFirstWaitingRequestAsksTheUserAndWaitingAppsAreListedFirst() {
        var book = AppAccessBook()
        let shell = AppKey(app: "/usr/bin/bash", profile: "work")
        book.noteRequest(shell, executable: shell.app, appID: nil)
        book.noteRequest(editor, executable: editor.app, appID: nil)
        let first = book.startWaiting(editor)
        let second = book.startWaiting(editor)
        #expect(first && !second)
        #expect(book.waitingRequests(editor) == 2 && book.waitingRequests(shell) == 0)
        let entries = book.entries { _ in false }
        #expect(entries.map(\.key) == [editor, shell])
        #expect(entries.map(\.access) == ["pending", "open"])
        book.stopWaiting(editor)
        book.stopWaiting(editor)
        #expect(book.waitingRequests(editor) == 0)
        #expect(book.entries { _ in false }.map(\.access) == ["open", "open"])
        let firstAgain = book.startWaiting(editor)
        #expect(firstAgain)
    }

    @Test func usageCountsTokensAndTheLastTimeAndKeepsTheSandboxID() {
        var book = AppAccessBook(decisions: [editor: .allowed])
        let maps = AppKey(app: "org.gnome.Maps", profile: "work")
        book.noteRequest(maps, executable: "/app/bin/gnome-maps", appID: "org.gnome.Maps")
        book.noteTokenHandedOut(maps, at: Date(timeIntervalSince1970: 100))
        book.noteTokenHandedOut(maps, at: Date(timeIntervalSince1970: 250))
        let entries = book.entries { _ in true }
        let mapsEntry = entries.first { $0.key == maps }
        #expect(mapsEntry?.usage == AppAccessBook.Usage(executable: "/app/bin/gnome-maps", appID: "org.gnome.Maps", requests: 2,
                                                         lastUsed: Date(timeIntervalSince1970: 250)))
        #expect(mapsEntry?.access == "pending")   // asks, never decided
        // A remembered decision is listed even before the app comes back.
        #expect(entries.first { $0.key == editor }?.access == "allowed")
        #expect(entries.first { $0.key == editor }?.usage == nil)
    }

    @Test func aTokenHandedOutAtOnceCountsLikeARequestAndAHandOutButNeverForAnAppThatWaits() {
        var book = AppAccessBook(decisions: [editor: .denied])
        let shell = AppKey(app: "/usr/bin/bash", profile: "work")
        let first = book.handOutAtOnce(shell, asks: false, executable: "/usr/bin/bash", appID: nil, at: Date(timeIntervalSince1970: 100))
        let second = book.handOutAtOnce(shell, asks: false, executable: "/usr/bin/bash", appID: nil, at: Date(timeIntervalSince1970: 160))
        #expect(first && second)
        // Denied, or undecided under a profile that asks: not answered at once, and not noted.
        let denied = book.handOutAtOnce(editor, asks: false, executable: editor.app, appID: nil, at: Date(timeIntervalSince1970: 200))
        let maps = AppKey(app: "org.gnome.Maps", profile: "work")
        let undecided = book.handOutAtOnce(maps, asks: true, executable: "/app/bin/gnome-maps", appID: "org.gnome.Maps", at: Date(timeIntervalSince1970: 200))
        #expect(!denied && !undecided)

        let entries = book.entries { _ in true }
        #expect(entries.first { $0.key == shell }?.usage == AppAccessBook.Usage(executable: "/usr/bin/bash", appID: nil, requests: 2,
                                                                                lastUsed: Date(timeIntervalSince1970: 160)))
        #expect(entries.first { $0.key == editor }?.usage == nil)
        #expect(entries.contains { $0.key == maps } == false)
    }
}
