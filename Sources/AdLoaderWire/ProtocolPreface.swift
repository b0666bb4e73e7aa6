/// The 12 bytes that open every connection of the framed protocol, in both directions.
///
/// The client sends them first; the server checks them and answers with the same 12 bytes
/// before any frame. See `Proto/PROTOCOL.md`, "Connection preface".
public enum ProtocolPreface {
    /// `"ADLOADER/1\r\n"` in ASCII.
    public static let bytes: [UInt8] = Array("ADLOADER/1\r\n".utf8)

    /// The number of bytes in the preface (12).
    public static let count = 12
}
