// Codable structs mirroring the bodies in Bodies.swift, as a Swift client or worker using JSONDecoder would write
// them.

struct EchoIntent: Codable {
    struct Parameters: Codable { var text: String }
    var type: String
    var parameters: Parameters
}

struct EchoReply: Codable {
    struct EchoData: Codable {
        var attempt: Int
        var instance: Int
        var jobsSeen: Int
        var pid: Int
        var text: String
        var worker: String
    }
    struct Response: Codable {
        var code: String
        var data: EchoData
    }
    struct InteractionInfo: Codable {
        var intent: EchoIntent
        var response: Response
    }
    struct UserInfo: Codable { var interaction: InteractionInfo }
    struct UserActivity: Codable {
        var activityType: String
        var userInfo: UserInfo
    }
    struct Handle: Codable {
        var code: String
        var data: EchoData
        var userActivity: UserActivity
    }
    var handle: Handle
    var intent: EchoIntent
}

struct CurrencyAmount: Codable {
    var amount: String
    var currencyCode: String
}

struct Person: Codable {
    var customIdentifier: String?
    var displayName: String
    var handle: String?
    var handleType: String?
}

struct Place: Codable {
    var address: String?
    var latitude: Double?
    var longitude: Double?
    var name: String
}

/// A resolution result: `kind`, then `value`, `options` or `reason` depending on the kind.
struct Resolution<Value: Codable>: Codable {
    var kind: String
    var value: Value?
    var options: [Value]?
    var reason: String?
}

struct SendPaymentInteraction: Codable {
    struct Parameters: Codable {
        var currencyAmount: CurrencyAmount
        var note: String
        var payee: Person
    }
    struct Intent: Codable {
        var parameters: Parameters
        var type: String
    }
    struct Resolve: Codable {
        var currencyAmount: Resolution<CurrencyAmount>
        var note: Resolution<String>
        var payee: Resolution<Person>
    }
    struct ConfirmData: Codable {
        var currencyAmount: CurrencyAmount
        var fee: String
        var payee: String
    }
    struct Confirm: Codable {
        var code: String
        var data: ConfirmData
    }
    struct HandleData: Codable {
        var currencyAmount: CurrencyAmount
        var payee: String
        var transactionId: String
    }
    struct Response: Codable {
        var code: String
        var data: HandleData
    }
    struct InteractionInfo: Codable {
        var intent: Intent
        var response: Response
    }
    struct UserInfo: Codable { var interaction: InteractionInfo }
    struct UserActivity: Codable {
        var activityType: String
        var userInfo: UserInfo
    }
    struct Handle: Codable {
        var code: String
        var data: HandleData
        var userActivity: UserActivity
    }
    var confirm: Confirm
    var handle: Handle
    var intent: Intent
    var resolve: Resolve
}

struct RideResolve: Codable {
    struct Parameters: Codable {
        var dropOffLocation: Place
        var partySize: Int
    }
    struct Intent: Codable {
        var parameters: Parameters
        var type: String
    }
    struct Resolve: Codable {
        var dropOffLocation: Resolution<Place>
        var partySize: Resolution<Int>
        var pickupLocation: Resolution<Place>
        var rideOptionName: Resolution<String>
        var scheduledPickupTime: Resolution<String>
    }
    var intent: Intent
    var resolve: Resolve
}

struct ErrorBody: Codable {
    var code: String
    var message: String
}

struct ProgressBody: Codable {
    var elapsedMs: Int
    var phase: String
    var state: String
    var worker: String?

    enum CodingKeys: String, CodingKey {
        case elapsedMs = "elapsed_ms"
        case phase, state, worker
    }
}
