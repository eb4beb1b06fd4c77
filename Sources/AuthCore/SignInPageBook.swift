import FoundationEssentials

/// The sign-in pages one profile has open, and the rules they follow: how many may be open,
/// which make room for a new one, how each ended as its waiters learn it, and how long an
/// ended page is served. A value without I/O; `InteractiveSignIns` carries it out.
///
/// The rules:
/// - at most `capacity` pages under way per profile, and `capacityPerOwner` per app: an app's
///   new page ends its oldest one under way (cancelled, and closed at once) rather than be
///   refused, so that no app can keep the user's own `authctl login` out by opening pages;
/// - an app's new page also closes its own pages that are only being served after their end: it
///   has moved on;
/// - at most `maximumOpen` pages open per profile in all, those served after their end
///   included, so that pages ended one after another cannot pile up (each is a listening socket);
/// - a page's first end is what waiting apps are told (`session.waitForInteractiveSignIn`); a
///   failed page may go on ("Start again"), and later ends are announced but change no answer;
///   any other end is its last, as is its visit's end at its time;
/// - after its last end a page is still served for `lingering` (its final page, "Signed in as …",
///   must load after the form that ended it), then closed;
/// - the ends of the last `remembered` pages are kept for an app that asks after the fact.
public struct SignInPageBook: Sendable {
    /// The most pages under way per profile.
    public static let capacity = 4
    /// The most pages under way per app.
    public static let capacityPerOwner = 2
    /// The most pages open per profile, under way or served after their end.
    public static let maximumOpen = 12
    /// How long a page is still served after its last end.
    public static let lingering: TimeInterval = 30
    /// How many ended pages' first ends are kept.
    public static let remembered = 16

    /// Why a page cannot be opened.
    public enum Refusal: Error, Sendable, Equatable {
        /// `capacity` pages of other apps are under way, or `maximumOpen` pages are open.
        case tooMany(Int)
    }

    /// What opening a page takes first.
    public struct Opening: Sendable, Equatable {
        /// The owner's pages under way beyond its share, oldest first: to cancel and close now.
        public var displaced: [String]
        /// The owner's pages served after their end: to close now.
        public var closing: [String]

        /// What a page's opening takes.
        public init(displaced: [String], closing: [String]) {
            self.displaced = displaced
            self.closing = closing
        }
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

    /// Opens page `id` for `owner`: what must end first to make room, or the refusal when the
    /// profile's pages are all other apps' (or too many are open). The pages `closing` names are
    /// closed in the book already, and those `displaced` names are no longer under way (their
    /// end, when it comes, is still the answer their waiters get); the owner carries both out.
    public mutating func open(_ id: String, owner: String) -> Result<Opening, Refusal> {
        let owned = pages.filter { $0.owner == owner }
        let closing = owned.filter(\.isOver).map(\.id)
        let running = owned.filter { !$0.isOver }
        let displaced = running.prefix(max(0, running.count + 1 - Self.capacityPerOwner)).map(\.id)
        let leaving = Set(closing + displaced)
        let staying = pages.filter { !leaving.contains($0.id) }
        guard staying.filter({ !$0.isOver }).count < Self.capacity, staying.count < Self.maximumOpen else {
            return .failure(.tooMany(Self.capacity))
        }
        for page in closing { close(page) }
        for page in displaced { visitEnded(page) }
        pages.append(Page(id: id, owner: owner))
        return .success(Opening(displaced: displaced, closing: closing))
    }

    /// Page `id` ended as `end`. True when this is its first end, which waiters are answered with.
    public mutating func ended(_ id: String, _ end: SignInPageEnd) -> Bool {
        guard let index = pages.firstIndex(where: { $0.id == id }) else { return false }
        if case .failed = end {} else { pages[index].isOver = true }
        guard pages[index].firstEnd == nil else { return false }
        pages[index].firstEnd = end
        return true
    }

    /// Page `id`'s visit is over (its last end, or a failed sign-in left at its time): it is
    /// only served until it closes.
    public mutating func visitEnded(_ id: String) {
        guard let index = pages.firstIndex(where: { $0.id == id }) else { return }
        pages[index].isOver = true
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
