public import AdLoaderUV

/// The byte stream under a framed connection (the name from before ``ByteStream`` moved to
/// AdLoaderUV, shared by every transport).
public typealias FramedByteStream = ByteStream
