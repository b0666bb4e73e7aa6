/// Every integration case, in the order `adloader examples list` prints them.
///
/// Adding a case (Examples/README.md): write its file, then add one line here. Swift cases
/// name their value; Python and shell cases name their file (under Examples/), whose first
/// comment line is the same title.
public enum Catalog {
    public static let examples: [Example] = [
        NativeFeedPrefetchBeforeTheListRenders.example,
        NativeFeedBorrowPerCellWithAWait.example,
        NativeFeedSlotAffinityOnScrollBack.example,
        NativeFeedReturnShownVsUnshown.example,
        NativeFeedParkedBorrowAnsweredWhenAdsArrive.example,
        NativeWatchEvents.example,
        NativeOneLoaderPerTargeting.example,
        AppOpenSplashOnFirstLaunch.example,
        AppOpenSplashOnAHotStart.example,
        AppOpenSplashRefusedByTheSessionCap.example,
        AppOpenSplashRefusedByTheDailyCap.example,
        InterstitialBetweenLevels.example,
        RewardedVideoForCoins.example,
        Example(.grpc, .native, "Feed borrow per cell", file: "Python/grpc_native_feed_borrow_per_cell.py"),
        Example(
            .grpc, .native, "Feed plan scrolling down and back",
            file: "Python/grpc_native_feed_plan_scrolling_down_and_back.py"),
        Example(
            .grpc, .native, "OpenRTB loader against an exchange",
            file: "Python/grpc_native_openrtb_loader_against_an_exchange.py"),
        Example(
            .cli, .native, "Feed prefetch, borrow and return from a shell", file: "CLI/cli_native_feed_from_a_shell.sh"),
        Example(.operator, .native, "Metrics scrape", file: "Python/operator_native_metrics_scrape.py"),
        Example(
            .operator, .native, "Disable and invalidate at run time",
            file: "Python/operator_native_disable_and_invalidate_at_run_time.py"),
        Example(.grpc, .native, "The cluster behind nginx", file: "Python/grpc_native_the_cluster_behind_nginx.py"),
    ]
}
