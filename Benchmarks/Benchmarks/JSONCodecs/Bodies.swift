/// The protocol's bodies, as `concierge send` printed them (release build of main, one broker and one
/// `concierge worker` on ipc://, 2026-11-24). Only the echoed text differs: 250 bytes of ASCII prose instead of "x".
enum Bodies {
    /// 250 bytes of text, as `concierge load --payload 250` sends.
    static let text = String(String(repeating: "The quick brown fox jumps over the lazy dog. ", count: 6).prefix(250))

    /// The intent of an Echo request (what a client sends and the worker parses): ~290 bytes.
    static let echoIntent = #"{"type":"Echo","parameters":{"text":"\#(text)"}}"#

    /// The final body of an Echo handle (what a worker serializes and the broker forwards for every echo request):
    /// the handle response with its default user activity, which carries the interaction again, and the intent.
    static let echoReply = """
        {"handle":{"code":"success","data":{"attempt":1,"instance":1,"jobsSeen":1,"pid":27393,"text":"\(text)",\
        "worker":"worker-27393"},"userActivity":{"activityType":"Echo","userInfo":{"interaction":{"intent":\
        {"parameters":{"text":"\(text)"},"type":"Echo"},"response":{"code":"success","data":{"attempt":1,\
        "instance":1,"jobsSeen":1,"pid":27393,"text":"\(text)","worker":"worker-27393"}}}}}},"intent":\
        {"parameters":{"text":"\(text)"},"type":"Echo"}}
        """

    /// The final body of a SendPayment lifecycle: the whole interaction (intent, resolve, confirm, handle with
    /// its user activity).
    static let sendPaymentInteraction = #"""
        {"confirm":{"code":"ready","data":{"currencyAmount":{"amount":"12.5","currencyCode":"EUR"},"fee":"0","payee":"Anna Schmidt"}},"handle":{"code":"success","data":{"currencyAmount":{"amount":"12.5","currencyCode":"EUR"},"payee":"contact-anna","transactionId":"txn-1"},"userActivity":{"activityType":"SendPayment","userInfo":{"interaction":{"intent":{"parameters":{"currencyAmount":{"amount":"12.5","currencyCode":"EUR"},"note":"lunch","payee":{"customIdentifier":"contact-anna","displayName":"Anna Schmidt","handle":"+49 30 5550101","handleType":"phoneNumber"}},"type":"SendPayment"},"response":{"code":"success","data":{"currencyAmount":{"amount":"12.5","currencyCode":"EUR"},"payee":"contact-anna","transactionId":"txn-1"}}}}}},"intent":{"parameters":{"currencyAmount":{"amount":"12.5","currencyCode":"EUR"},"note":"lunch","payee":{"customIdentifier":"contact-anna","displayName":"Anna Schmidt","handle":"+49 30 5550101","handleType":"phoneNumber"}},"type":"SendPayment"},"resolve":{"currencyAmount":{"kind":"success","value":{"amount":"12.5","currencyCode":"EUR"}},"note":{"kind":"success","value":"lunch"},"payee":{"kind":"success","value":{"customIdentifier":"contact-anna","displayName":"Anna Schmidt","handle":"+49 30 5550101","handleType":"phoneNumber"}}}}
        """#

    /// The final body of a RequestRide resolve: five resolutions (two successes, three notRequired).
    static let rideResolve = #"""
        {"intent":{"parameters":{"dropOffLocation":{"address":"San Francisco International Airport, CA 94128","latitude":37.6213,"longitude":-122.379,"name":"SFO"},"partySize":2},"type":"RequestRide"},"resolve":{"dropOffLocation":{"kind":"success","value":{"address":"San Francisco International Airport, CA 94128","latitude":37.6213,"longitude":-122.379,"name":"SFO"}},"partySize":{"kind":"success","value":2},"pickupLocation":{"kind":"notRequired"},"rideOptionName":{"kind":"notRequired"},"scheduledPickupTime":{"kind":"notRequired"}}}
        """#

    /// An error reply's body.
    static let error = #"{"code":"busy","message":"no worker could start the request before its deadline"}"#

    /// A progress reply's body (Schemas/PROTOCOL.md, schema: progress, with the worker of a running job).
    static let progress = #"{"elapsed_ms":3001,"phase":"confirm","state":"running","worker":"pool-0"}"#
}
