/// The full gRPC names of the methods of `adloader.v1.NativeAdLoader`.
public enum MethodName {
    /// Unary: PrefetchRequest -> PrefetchResponse.
    public static let prefetch = "/adloader.v1.NativeAdLoader/Prefetch"
    /// Unary: BorrowRequest -> BorrowResponse.
    public static let borrow = "/adloader.v1.NativeAdLoader/Borrow"
    /// Unary: ReturnRequest -> ReturnResponse.
    public static let returnLease = "/adloader.v1.NativeAdLoader/Return"
    /// Unary: StatsRequest -> StatsResponse.
    public static let stats = "/adloader.v1.NativeAdLoader/Stats"
    /// Server streaming: WatchRequest -> stream of Event.
    public static let watch = "/adloader.v1.NativeAdLoader/Watch"

    /// Unary: AppOpenRequest -> AppOpenResponse.
    public static let appOpen = "/adloader.v1.NativeAdLoader/AppOpen"

    /// Unary: SetLoaderEnabledRequest -> SetLoaderEnabledResponse.
    public static let setLoaderEnabled = "/adloader.v1.NativeAdLoader/SetLoaderEnabled"
    /// Unary: ReloadRequest -> ReloadResponse.
    public static let reload = "/adloader.v1.NativeAdLoader/Reload"

    /// Unary: ServerInfoRequest -> ServerInfoResponse.
    public static let serverInfo = "/adloader.v1.NativeAdLoader/ServerInfo"

    /// Unary: PlanRequest -> PlanResponse.
    public static let plan = "/adloader.v1.NativeAdLoader/Plan"

    /// Every method, in declaration order.
    public static let all = [
        prefetch, borrow, returnLease, stats, watch, appOpen, setLoaderEnabled, reload, serverInfo, plan,
    ]
}
