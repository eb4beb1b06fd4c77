import AuthCore
import Testing

/// The rules of a profile's sign-in pages, without a page: how many, who makes room, which end
/// a waiter learns, what is kept after a page closes.
@Suite struct SignInPageBookTests {
    static let account = SignInPageAccount(email: "ada@example.com")
    static let none = SignInPageBook.Opening(displaced: [], closing: [])

    @Test func anAppsNewPageEndsItsOldestBeyondItsShareAndOthersAreRefusedOnlyWhenFull() {
        var book = SignInPageBook()
        let opened1 = book.open("a1", owner: "app")
        #expect(opened1 == .success(Self.none))
        let opened2 = book.open("a2", owner: "app")
        #expect(opened2 == .success(Self.none))
        // Its share is two: a third page ends its oldest, which is no longer under way.
        let opened3 = book.open("a3", owner: "app")
        #expect(opened3 == .success(.init(displaced: ["a1"], closing: [])))
        #expect(book.underWay == ["a2", "a3"] && book.isOpen("a1"))
        // Its end, when it comes, is still what its waiters learn.
        let displacedEnd = book.ended("a1", .cancelled(signedInAs: nil))
        #expect(displacedEnd && book.firstEnd(of: "a1") == .cancelled(signedInAs: nil))
        let opened4 = book.open("b1", owner: "other")
        #expect(opened4 == .success(Self.none))
        let opened5 = book.open("c1", owner: "third")
        #expect(opened5 == .success(Self.none))
        #expect(book.underWay == ["a2", "a3", "b1", "c1"])
        #expect(book.owner(of: "b1") == "other" && book.owner(of: "a2") == "app" && book.owner(of: "nowhere") == nil)
        // Four under way: another app is refused, even one below its share; an app at its share
        // still makes room, with its own oldest, and closes what it left on screen.
        let opened6 = book.open("d1", owner: "fourth")
        #expect(opened6 == .failure(.tooMany(SignInPageBook.capacity)))
        let opened7 = book.open("b2", owner: "other")
        #expect(opened7 == .failure(.tooMany(SignInPageBook.capacity)))
        let opened8 = book.open("a4", owner: "app")
        #expect(opened8 == .success(.init(displaced: ["a2"], closing: ["a1"])))
        #expect(!book.isOpen("a1") && book.firstEnd(of: "a1") == .cancelled(signedInAs: nil))
    }

    @Test func pagesShownAfterTheirEndCountTooSoThatEndedPagesCannotPileUp() {
        var book = SignInPageBook()
        // Each app signs in and ends its page, which is then only shown; none closes by itself here.
        for index in 0..<SignInPageBook.maximumOpen {
            let opened = book.open("p\(index)", owner: "app\(index)")
            #expect(opened == .success(Self.none))
            _ = book.ended("p\(index)", .signedIn(Self.account))
        }
        #expect(book.underWay.isEmpty)
        let refused = book.open("one-more", owner: "newcomer")
        #expect(refused == .failure(.tooMany(SignInPageBook.capacity)))
        // An app with a page on screen makes room by closing its own.
        let again = book.open("p0-again", owner: "app0")
        #expect(again == .success(.init(displaced: [], closing: ["p0"])))
    }

    @Test func aWaiterLearnsTheFirstEndAndAFailedPageStaysUnderWayUntilItsLastEnd() {
        var book = SignInPageBook()
        _ = book.open("p", owner: "app")
        #expect(book.firstEnd(of: "p") == nil)
        let first = book.ended("p", .failed(.serverFailed))
        #expect(first)
        #expect(book.underWay == ["p"])
        // "Start again", then signed in: announced, but the first end stays the answer.
        let second = book.ended("p", .signedIn(Self.account))
        #expect(!second)
        #expect(book.firstEnd(of: "p") == .failed(.serverFailed))
        #expect(book.underWay.isEmpty && book.isOpen("p"))
        let nowhere = book.ended("nowhere", .expired)
        #expect(!nowhere)
        // A failed page left at its time: its visit ends without another end.
        _ = book.open("q", owner: "app2")
        _ = book.ended("q", .failed(.nothingOffered))
        book.visitEnded("q")
        #expect(book.underWay.isEmpty)
    }

    @Test func aClosedPageKeepsOnlyItsFirstEndAmongTheLastFew() {
        var book = SignInPageBook()
        _ = book.open("p", owner: "app")
        _ = book.ended("p", .signedIn(Self.account))
        book.close("p")
        #expect(!book.isOpen("p"))
        #expect(book.firstEnd(of: "p") == .signedIn(Self.account))
        // A page closed without an end (authd stopped) leaves nothing.
        _ = book.open("q", owner: "app")
        book.close("q")
        #expect(book.firstEnd(of: "q") == nil)
        for index in 0..<SignInPageBook.remembered {
            _ = book.open("r\(index)", owner: "app\(index)")
            _ = book.ended("r\(index)", .expired)
            book.close("r\(index)")
        }
        #expect(book.firstEnd(of: "p") == nil)
        #expect(book.firstEnd(of: "r0") == .expired)
    }
}
