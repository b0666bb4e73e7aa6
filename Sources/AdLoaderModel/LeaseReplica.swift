/// Which replica lent a lease: the index in the top 12 bits of every lease id.
///
/// A daemon's index is `listeners.replicaIndex` when configured, else derived from its
/// instance name (default the bound `host:port`, the name nginx, HAProxy and `--endpoints`
/// use) by ``index(forInstance:)``, so a client that knows the replicas' names can find the
/// lender of any lease id without asking: ``NativeAdvertisementLoader/lendingReplica(of:)``.
/// Two names of one fleet may derive the same index (12 bits: about 1 in 1,400 for three
/// replicas, 1 in 15 for thirty); configure `replicaIndex` explicitly there.
public enum LeaseReplica {
    /// 1 + (FNV-1a 32 of the name's UTF-8 bytes) mod 4,095: never 0 (0 means "no fleet").
    public static func index(forInstance name: String) -> Int {
        var hash: UInt32 = 0x811C_9DC5
        for byte in name.utf8 {
            hash ^= UInt32(byte)
            hash = hash &* 0x0100_0193
        }
        return 1 + Int(hash % 4_095)
    }

    /// The largest index (12 bits).
    public static let maximum = 4_095

    /// Bits of a lease id below the replica index.
    public static let leaseIDShift = 52

    /// The replica index lease id `leaseID` carries (its top 12 bits; 0: lent outside a fleet).
    /// What the loader's ``NativeAdvertisementLoader/lendingReplica(of:)`` answers, without the
    /// loader: a client finds a lease's lender from the id alone.
    public static func index(ofLease leaseID: UInt64) -> Int { Int(leaseID >> UInt64(leaseIDShift)) }
}
