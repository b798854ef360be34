import ZeroMQ

/// The shell's bodies are libzmq messages: the stores charge their size to their memory budgets.
extension ZMQMessage: StoredBody {
    var storedByteCount: Int { count }
    var storedBytes: [UInt8] { bytes }
    static func make(storedBytes: [UInt8]) -> ZMQMessage? { try? copying(storedBytes) }
}
