// concierge-worker: one worker process with the example handlers, and nothing else — no Foundation, no broker or
// pool code — so that each process of a pool stays small in memory. It takes the same options and environment as
// `concierge worker` (both use ConciergeCommandLine's `WorkerProcessOptions`); `concierge pool` and `concierge up`
// run it when it sits next to `concierge`.
//
// It is also the model for a handler author's own worker: a provider and `WorkerMain.run` (Docs/WRITING-HANDLERS.md;
// Examples/pizza-worker).
import ConciergeCommandLine
import ConciergeExamples

@main
enum ConciergeWorkerMain {
    static func main() {
        WorkerMain.run(Examples.provider)
    }
}
