import Logging
import TrellisStore

/// Assembles the relay: every service's routes in one table, and the engine over it.
public enum Relay {
    /// The routing table of every service Trellis runs.
    public static func routingTable(settings: RelaySettings) -> RoutingTable {
        var table = RoutingTable()
        let catalog = CatalogService(settings: settings)
        table.add(PlantService(settings: settings, catalog: catalog).routes)
        table.add(ButtonService(settings: settings).routes)
        table.add(catalog.routes)
        table.add(CatalogActions(catalog: catalog).routes)
        table.add(DeviceService(settings: settings).routes)
        table.add(BrowseService(settings: settings).routes)
        table.add(DeadLetterService(settings: settings).routes)
        table.add(TraceService(settings: settings).routes)
        table.add(BackupService.routes(settings: settings))
        if let homeAssistant = HomeAssistantService(settings: settings) { table.add(homeAssistant.routes) }
        table.add(BridgeService(bridges: settings.bridges).routes)
        return table
    }

    /// The engine over that table, ready to process messages.
    public static func engine(
        store: any TrellisStore, settings: RelaySettings, logger: Logger,
        counters: RelayCounters = RelayCounters(),
        deliveries: DeliveryLedger = DeliveryLedger(),
        discovery: DiscoveryLedger = DiscoveryLedger(),
        backups: BackupLedger = BackupLedger(),
        limits: ClientLimits = ClientLimits(),
        watch: TrafficWatch = TrafficWatch()
    ) -> RelayEngine {
        RelayEngine(
            routes: routingTable(settings: settings), store: store, settings: settings, logger: logger,
            counters: counters, deliveries: deliveries, discovery: discovery, backups: backups, limits: limits,
            watch: watch)
    }
}
