/// The checked-in transcripts of `Fixtures/` (also read by Tests/python/test_transcript_schema.py).
enum Fixture {
    static let directory = String(#filePath.dropLast("Fixture.swift".count)) + "Fixtures/"
    /// A SendMessage conversation: John, a disambiguation, option 0, then handle (``SendMessageConversation``).
    static let sendMessage = directory + "send-message.jsonl"
    /// A conversation recorded by the broker itself (`concierge broker --transcripts DIR`): the SendMessage fixture's
    /// turns replayed against a broker and a `concierge-worker`.
    static let brokerRecorded = directory + "broker-recorded.jsonl"
    /// Every kind of record at the edges of the format, as the writer writes them (``TranscriptFixtureTests``).
    static let writerSample = directory + "writer-sample.jsonl"
}
