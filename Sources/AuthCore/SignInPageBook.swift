import FoundationEssentials

/// The sign-in pages one profile has open, and the rules they follow: how many may be open,
/// which make room for a new one, how each ended as its waiters learn it, and how long an
/// ended page is still served. A value without I/O; `InteractiveSignIns` carries it out.
///
/// The rules:
/// - at most `capacity` pages under way per profile, and `capacityPerOwner` per app: an app's
///   new page ends its oldest one under way (cancelled) rather than be refused, so that no app
///   can keep the user's own `authctl login` out by opening pages;
/// - a page's first end is what waiting apps are told (`session.waitForInteractiveSignIn`); a
///   failed page may go on ("Start again"), and later ends are announced but change no answer;
/// - after its last end a page is still served for `lingering` (its final page, "Signed in as …",
///   must load after the form that ended it), then closed;
/// - the ends of the last `remembered` pages are kept for an app that asks after the fact.
public struct SignInPageBook: Sendable {
    /// The most pages under way per profile.
    public static let capacity = 4
    /// The most pages under way per app.
    public static let capacityPerOwner = 2
    /// How long a page is still served after its last end.
    public static let lingering: TimeInterval = 30
    /// How many ended pages' first ends are kept.
    public static let remembered = 16

    /// Why a page cannot be opened.
    public enum Refusal: Error, Sendable, Equatable {
        /// `capacity` pages of other apps are under way.
        case tooMany(Int)
    }

    private struct Page: Sendable {
        var id: String
        var owner: String
        /// The first end, once there is one.
        var firstEnd: SignInPageEnd?
        /// Whether the page has had its last end (it is only served, lingering, until closed).
        var isOver = false
    }

    /// The pages not yet closed, oldest first.
    private var pages: [Page] = []
    /// The first ends of closed pages, newest last.
    private var closed: [(id: String, end: SignInPageEnd)] = []

    /// An empty book.
    public init() {}

    /// The pages under way (not yet at their last end).
    public var underWay: [String] { pages.filter { !$0.isOver }.map(\.id) }

    /// Opens page `id` for `owner`: the pages to cancel first to make room (the owner's oldest
    /// beyond its share), or the refusal when the profile's pages are all other apps'.
    public mutating func open(_ id: String, owner: String) -> Result<[String], Refusal> {
        let running = pages.filter { !$0.isOver }
        let owned = running.filter { $0.owner == owner }
        let displaced = owned.prefix(max(0, owned.count + 1 - Self.capacityPerOwner)).map(\.id)
        guard running.count - displaced.count < Self.capacity else { return .failure(.tooMany(Self.capacity)) }
        pages.append(Page(id: id, owner: owner))
        return .success(displaced)
    }

    /// Page `id` ended as `end`; `isLast` when nothing can follow (any end but a failure, or the
    /// page's time is up). True when this is its first end, which waiters are answered with.
    public mutating func ended(_ id: String, _ end: SignInPageEnd, isLast: Bool) -> Bool {
        guard let index = pages.firstIndex(where: { $0.id == id }) else { return false }
        if isLast { pages[index].isOver = true }
        guard pages[index].firstEnd == nil else { return false }
        pages[index].firstEnd = end
        return true
    }

    /// How page `id` ended first, if it has: open or closed lately.
    public func firstEnd(of id: String) -> SignInPageEnd? {
        pages.first { $0.id == id }?.firstEnd ?? closed.last { $0.id == id }?.end
    }

    /// The app that opened page `id`, while it is open: the one app that may cancel it.
    public func owner(of id: String) -> String? { pages.first { $0.id == id }?.owner }

    /// Whether page `id` is open (under way, or lingering after its end).
    public func isOpen(_ id: String) -> Bool { pages.contains { $0.id == id } }

    /// Page `id`'s server stopped: only its first end is kept, among the last `remembered`.
    public mutating func close(_ id: String) {
        guard let index = pages.firstIndex(where: { $0.id == id }) else { return }
        let page = pages.remove(at: index)
        if let end = page.firstEnd {
            closed.append((id, end))
            if closed.count > Self.remembered { closed.removeFirst(closed.count - Self.remembered) }
        }
    }
}
