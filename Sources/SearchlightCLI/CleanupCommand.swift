import ArgumentParser
import SearchlightHistory

struct CleanupCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cleanup",
        abstract: "Delete history every required consumer has processed (and history older than the model's maximum duration).")

    @OptionGroup var options: StoreOptions

    @Flag(help: "Only report what would be deleted, and what holds the rest back.")
    var dryRun = false

    func run() throws {
        let store = try options.openStore()
        let cleaner = HistoryCleaner(store: store, configuration: .init(model: store.model))
        let plan: HistoryCleaner.Plan
        if dryRun {
            plan = try cleaner.plan()
            if let bound = plan.deleteThrough {
                print("Would delete \(plan.count.transactions) transactions and \(plan.count.changes) changes, through token \(bound).")
            } else {
                print("Nothing to delete.")
            }
        } else {
            let report = try cleaner.clean()
            plan = report.plan
            if let bound = plan.deleteThrough {
                print("Deleted \(report.deleted.transactions) transactions and \(report.deleted.changes) changes, through token \(bound).")
            } else {
                print("Nothing to delete.")
            }
        }
        if plan.forcedByMaximumDuration {
            print("History older than the maximum duration \(dryRun ? "would be" : "was") deleted before these consumers processed it: \(plan.expiringConsumers.joined(separator: ", ")).")
        }
        for holdback in plan.holdbacks { print("Held back: \(holdback).") }
    }
}
