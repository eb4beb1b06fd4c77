import AuthCore
import Testing

/// The rules of a profile's sign-in pages, without a page: how many, who makes room, which end
/// a waiter learns, what is kept after a page closes.
@Suite struct SignInPageBookTests {
    static let account = SignInPageAccount(email: "ada@example.com")

    @Test func anAppsNewPageEndsItsOldestBeyondItsShareAndOthersAreRefusedOnlyWhenFull() {
        var book = SignInPageBook()
        let opened1 = book.open("a1", owner: "app")
        #expect(opened1 == .success([]))
        let opened2 = book.open("a2", owner: "app")
        #expect(opened2 == .success([]))
        // Its share is two: a third page ends its oldest.
        let opened3 = book.open("a3", owner: "app")
        #expect(opened3 == .success(["a1"]))
        _ = book.ended("a1", .cancelled(signedInAs: nil), isLast: true)
        let opened4 = book.open("b1", owner: "other")
        #expect(opened4 == .success([]))
        let opened5 = book.open("c1", owner: "third")
        #expect(opened5 == .success([]))
        #expect(book.underWay == ["a2", "a3", "b1", "c1"])
        #expect(book.owner(of: "b1") == "other" && book.owner(of: "a2") == "app" && book.owner(of: "nowhere") == nil)
        // Four under way: another app is refused, even one below its share; an app at its share
        // still makes room, with its own oldest.
        let opened6 = book.open("d1", owner: "fourth")
        #expect(opened6 == .failure(.tooMany(SignInPageBook.capacity)))
        let opened7 = book.open("b2", owner: "other")
        #expect(opened7 == .failure(.tooMany(SignInPageBook.capacity)))
        let opened8 = book.open("a4", owner: "app")
        #expect(opened8 == .success(["a2"]))
    }

    @Test func aWaiterLearnsTheFirstEndAndAFailedPageStaysUnderWayUntilItsLastEnd() {
        var book = SignInPageBook()
        _ = book.open("p", owner: "app")
        #expect(book.firstEnd(of: "p") == nil)
        let first = book.ended("p", .failed(.serverFailed), isLast: false)
        #expect(first)
        #expect(book.underWay == ["p"])
        // "Start again", then signed in: announced, but the first end stays the answer.
        let second = book.ended("p", .signedIn(Self.account), isLast: true)
        #expect(!second)
        #expect(book.firstEnd(of: "p") == .failed(.serverFailed))
        #expect(book.underWay.isEmpty && book.isOpen("p"))
        let nowhere = book.ended("nowhere", .expired, isLast: true)
        #expect(!nowhere)
    }

    @Test func aClosedPageKeepsOnlyItsFirstEndAmongTheLastFew() {
        var book = SignInPageBook()
        _ = book.open("p", owner: "app")
        _ = book.ended("p", .signedIn(Self.account), isLast: true)
        book.close("p")
        #expect(!book.isOpen("p"))
        #expect(book.firstEnd(of: "p") == .signedIn(Self.account))
        // A page closed without an end (authd stopped) leaves nothing.
        _ = book.open("q", owner: "app")
        book.close("q")
        #expect(book.firstEnd(of: "q") == nil)
        for index in 0..<SignInPageBook.remembered {
            _ = book.open("r\(index)", owner: "app\(index)")
            _ = book.ended("r\(index)", .expired, isLast: true)
            book.close("r\(index)")
        }
        #expect(book.firstEnd(of: "p") == nil)
        #expect(book.firstEnd(of: "r0") == .expired)
    }
}
