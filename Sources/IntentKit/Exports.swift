// Handler authors build response data and user activities from `JSONValue`, so importing IntentKit is enough.
@_exported public import ConciergeJSON
