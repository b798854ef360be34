import ArgumentParser
import IntentWire

/// A `--broker` value: one endpoint, or several separated by commas (the active broker and its standbys, e.g.
/// `tcp://10.0.0.1:5555,tcp://10.0.0.2:5555`). Clients and workers connect to one at a time and follow the active
/// broker.
public enum BrokerEndpointList {
    /// The endpoints of a `--broker` value, in order, without surrounding spaces. Throws a `ValidationError` naming
    /// `option` when an item is empty (`a,,b`, a leading or trailing comma, an empty value) or given twice.
    ///
    /// With `checkSyntax`, each endpoint must also be one libzmq can connect to (``EndpointSyntax``): a malformed one
    /// is a usage error at start (exit 64), never an endless retry.
    public static func parse(_ text: String, option: String = "--broker", checkSyntax: Bool = false) throws
        -> [String]
    {
        let items = text.split(separator: ",", omittingEmptySubsequences: false).map(Self.trimmed)
        guard !items.contains(where: \.isEmpty) else {
            throw ValidationError("\(option) takes endpoints separated by commas, with no empty item: `\(text)`")
        }
        if checkSyntax {
            for item in items {
                do {
                    try EndpointSyntax.check(item, connecting: true)
                } catch {
                    throw ValidationError("\(option): \(error.message)")
                }
            }
        }
        var seen: Set<String> = []
        for item in items where !seen.insert(item).inserted {
            throw ValidationError("\(option) names \(item) twice")
        }
        return items
    }

    private static func trimmed(_ text: Substring) -> String {
        String(text.drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
    }
}
