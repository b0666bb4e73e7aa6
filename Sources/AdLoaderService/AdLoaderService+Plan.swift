import AdLoaderCore
import AdLoaderWire

extension AdLoaderService {
    /// Plan: a window of a feed (PROTOCOL.md 7.11). The window's bounds are checked by the
    /// loader (INVALID_ARGUMENT naming `visible` or `ahead`), and the privacy signals as for
    /// Borrow (a bad enum value: INVALID_ARGUMENT naming `privacy.gdpr`); here only what the wire adds:
    /// `last_visible` before `first_visible`, and the placement message's "0 = none / the
    /// loader's" values.
    func plan(_ message: PlanRequestMessage, callID: UInt64, responder: any CallResponder) throws {
        try checkIdentifiers(["feed_id": message.feedID, "ad_unit_id": message.adUnitID, "loader": message.loader])
        guard message.lastVisible >= message.firstVisible else {
            throw LoaderError(
                code: .invalidArgument, field: "last_visible",
                message: "must be at least first_visible (\(message.firstVisible)), got \(message.lastVisible)")
        }
        let name = loaderName(message.loader)
        var placement: PlacementRules?
        if let rules = message.placement {
            let loaderMaximum =
                loader.configuration(named: name)?.placement.maximumAdsPerFeed ?? PlacementRules.defaultMaximumAds
            placement = PlacementRules(
                fixedPositions: rules.fixedPositions.map { Int($0) },
                repeatingInterval: rules.repeatingInterval == 0 ? nil : Int(rules.repeatingInterval),
                maximumAdsPerFeed: rules.maximumAds == 0 ? loaderMaximum : Int(rules.maximumAds))
        }
        let plan = try loader.plan(
            PlanRequest(
                feedID: message.feedID, adUnitID: message.adUnitID, loader: name,
                visible: Int(message.firstVisible)...Int(message.lastVisible), ahead: Int(message.ahead),
                placement: placement, privacy: try message.privacy?.signals()))
        responder.answer(callID, .message(PlanResponseMessage(plan: plan)))
    }
}
