extension Intent {
    /// The declared parameter stored at `keyPath`, or nil when ``Intent/parameters`` declares none there.
    ///
    /// Tools that take a parameter by key path (such as the `IntentTesting` conversation driver) use this to find
    /// its wire name:
    /// ```swift
    /// SendMessageIntent.parameter(at: \SendMessageIntent.recipient)?.name  // "recipient"
    /// ```
    public static func parameter(at keyPath: AnyKeyPath) -> IntentParameter<Self>? {
        for parameter in parameters where parameter.matches(keyPath) { return parameter }
        return nil
    }

    /// The declared parameter named `name` on the wire, or nil when ``Intent/parameters`` declares none.
    public static func parameter(named name: String) -> IntentParameter<Self>? {
        for parameter in parameters where parameter.name == name { return parameter }
        return nil
    }
}
