import CZeroMQ

extension ZMQSocket {
    /// The security mechanisms libzmq knows (`ZMQ_MECHANISM`).
    public enum Mechanism: Int32, Sendable {
        case null = 0
        case plain = 1
        case curve = 2
        case gssapi = 3
    }

    /// Makes this socket a CURVE server (set before `bind`): peers must be CURVE clients that know the matching
    /// public key, and each handshake is put to the context's ZAP handler under `zapDomain`.
    ///
    /// Without a ZAP handler bound at `inproc://zeromq.zap.01` in the same context, libzmq 4.3 admits every
    /// CURVE client: bind the handler first.
    public func makeCurveServer(secretKey: CurveSecretKey, zapDomain: String) throws(ZMQError) {
        try setOption(.curveServer, 1)
        try setOption(.curveSecretKey, bytes: secretKey.bytes)
        try setOption(.zapDomain, string: zapDomain)
    }

    /// Makes this socket a CURVE client of the server with `keys.serverKey`, presenting `keys.keyPair`
    /// (set before `connect`).
    public func makeCurveClient(_ keys: CurveClientKeys) throws(ZMQError) {
        try setOption(.curveServerKey, bytes: keys.serverKey.bytes)
        try setOption(.curvePublicKey, bytes: keys.keyPair.publicKey.bytes)
        try setOption(.curveSecretKey, bytes: keys.keyPair.secretKey.bytes)
    }

    /// The security mechanism this socket uses; ``Mechanism/null`` if the option cannot be read (the socket is
    /// closed or its context terminated).
    public var mechanism: Mechanism {
        Mechanism(rawValue: (try? intOption(.mechanism)) ?? 0) ?? .null
    }

    /// A binary option of up to `capacity` bytes (e.g. ``ZMQSocketOption/curvePublicKey`` with 32: the raw key).
    public func bytesOption(_ option: ZMQSocketOption, capacity: Int) throws(ZMQError) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: capacity)
        var size = capacity
        let rc = buffer.withUnsafeMutableBytes { zmq_getsockopt(handle, option.rawValue, $0.baseAddress, &size) }
        try check(rc)
        return Array(buffer[..<size])
    }
}
