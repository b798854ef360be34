public import ConciergeJSON

extension LoadSummary {
    /// The machine-readable summary (`concierge load --json`): `throughput_rps`, `requests`, `first_reply_us` and
    /// `final_reply_us` (each with `p50`, `p90`, `p99`, `p999`, `max`, `mean`, `count`), `outcomes`,
    /// `deadline_misses`, `throttled` (requests the client's throttle refused unsent), `failure_replies` (final
    /// replies with a handler's failure code, not in `throughput_rps` or `final_replies`), `labels` (per workload
    /// item: its counts, throughput and final-reply percentiles), `idempotency_keys` (whether every request carried a fresh key), and the rest of the run's
    /// figures; latencies in microseconds.
    public var json: JSONValue {
        func percentiles(_ value: LatencyPercentiles) -> JSONValue {
            [
                "p50": .int(Int64(value.p50)), "p90": .int(Int64(value.p90)), "p99": .int(Int64(value.p99)),
                "p999": .int(Int64(value.p999)), "max": .int(Int64(value.max)), "mean": .double(value.mean),
                "count": .int(Int64(value.count)),
            ]
        }
        var object: JSONObject = [
            "mode": .string(mode),
            "connections": .int(Int64(connections)),
            "duration_s": .double(durationSeconds),
            "warmup_s": .double(warmupSeconds),
            "deadline_ms": .int(Int64(deadlineMilliseconds)),
            "workload": .array(workload.map { .string($0) }),
            "requests": .int(Int64(requests)),
            "throughput_rps": .double(throughputRPS),
            "answered_rps": .double(answeredRPS),
            "offered_rps": .double(offeredRPS),
            "final_replies": .int(Int64(finalReplies)),
            "error_replies": .int(Int64(errorReplies)),
            "failure_replies": .int(Int64(failureReplies)),
            "progress_replies": .int(Int64(progressReplies)),
            "unanswered": .int(Int64(unanswered)),
            "throttled": .int(Int64(throttled)),
            "errors": .int(Int64(errors)),
            "deadline_misses": .int(Int64(deadlineMisses)),
            "outcomes": .object(JSONObject(outcomes.mapValues { JSONValue.int(Int64($0)) })),
            "first_reply_us": percentiles(firstReply),
            "final_reply_us": percentiles(finalReply),
            "client_backlog_max": .int(Int64(clientBacklogMax)),
            "stray_replies": .int(Int64(strayReplies)),
            "idempotency_keys": .bool(idempotencyKeys),
            "timeline": .array(
                timeline.map {
                    [
                        "second": .int(Int64($0.second)), "sent": .int(Int64($0.sent)),
                        "completed": .int(Int64($0.completed)), "errors": .int(Int64($0.errors)),
                        "deadline_misses": .int(Int64($0.deadlineMisses)),
                        "final_p50_us": .int(Int64($0.finalP50Microseconds)),
                        "final_p99_us": .int(Int64($0.finalP99Microseconds)),
                    ]
                }
            ),
        ]
        object["labels"] = .array(
            labels.map {
                [
                    "label": .string($0.label), "phase": .string($0.phase), "weight": .int(Int64($0.weight)),
                    "requests": .int(Int64($0.requests)), "final_replies": .int(Int64($0.finalReplies)),
                    "failure_replies": .int(Int64($0.failureReplies)), "error_replies": .int(Int64($0.errorReplies)),
                    "unanswered": .int(Int64($0.unanswered)), "throughput_rps": .double($0.throughputRPS),
                    "final_reply_us": percentiles($0.finalReply),
                ]
            })
        if let concurrency { object["concurrency"] = .int(Int64(concurrency)) }
        if let targetRate { object["target_rate"] = .double(targetRate) }
        return .object(object)
    }
}
