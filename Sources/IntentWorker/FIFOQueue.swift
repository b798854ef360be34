/// A first-in, first-out queue: an array and the index of its head.
///
/// `append` adds at the tail and `popFirst` takes from the head, both in amortized O(1): a taken slot is cleared (so
/// the queue holds no element it has handed out) and the head index moves on; the taken slots at the front are
/// dropped in one move once they are at least half of the array and more than a few, and the whole array is emptied,
/// keeping its capacity, whenever the last element is taken. `WorkerThreadExecutor` keeps its jobs in one (behind a
/// `Mutex`); it replaces swift-collections' `Deque`, whose package a worker's build would otherwise compile.
struct FIFOQueue<Element> {
    /// The elements from `head` on are queued, oldest first; the slots before `head` were taken and are nil.
    private var slots: [Element?] = []
    private var head = 0

    init() {}

    /// Whether nothing is queued.
    var isEmpty: Bool { head == slots.count }

    /// How many elements are queued.
    var count: Int { slots.count - head }

    /// Adds `element` at the tail.
    mutating func append(_ element: Element) {
        slots.append(element)
    }

    /// Removes and returns the element at the head (the oldest), or nil when the queue is empty.
    mutating func popFirst() -> Element? {
        guard head < slots.count else { return nil }
        let element = slots[head].take()
        head += 1
        if head == slots.count {
            slots.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 32 && head * 2 >= slots.count {
            slots.removeFirst(head)
            head = 0
        }
        return element
    }
}
