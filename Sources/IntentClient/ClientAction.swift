/// What the client's state machine asks its loop to do besides sending frames: hand replies and endings to the
/// callers waiting for them. `Stream`, `Waiter` and `PingWaiter` are the loop's continuations (in rule tests, plain
/// values).
enum ClientAction<Stream, Waiter, PingWaiter> {
    /// A reply for the caller iterating the request's stream (a progress reply, or the ending before ``finish``).
    case yield(Stream, Reply)
    /// End the request's stream: normally (nil, after its ending was yielded) or with an error.
    case finish(Stream, ClientError?)
    /// Answer a caller of `status(of:)` or `cancel(requestID:)`.
    case resume(Waiter, Result<Reply, ClientError>)
    /// Answer a caller of `ping()`: nil for the PONG, or why none came.
    case resumePing(PingWaiter, ClientError?)
}
