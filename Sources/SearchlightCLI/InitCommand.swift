import ArgumentParser
import Foundation
import SearchlightCommandSupport
import Logging
import Searchlight
import SearchlightHistory

struct InitCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "init",
        abstract: "Install or update history tracking and the index for a model, and save the model in the database.")

    @OptionGroup var options: StoreOptions

    @Option(help: "The model file (JSON, see Schemas/model.schema.json).")
    var model: String

    func run() throws {
        Output.bootstrapLogging(options.logLevel)
        // Everything that can be checked without the database is checked before touching it.
        let model = try SearchlightModel(contentsOf: URL(fileURLWithPath: Arguments.path(self.model, naming: "model file")))
        try Indexer.validate(model: model)
        var configuration = HistoryStore.Configuration()
        configuration.logger = Logger(label: "searchlight")
        let store = try HistoryStore(path: Arguments.path(options.db, naming: "database"), model: model, configuration: configuration)
        let indexer = try Indexer(store: store, configuration: options.indexerConfiguration())
        let summary = try indexer.indexPendingChanges()
        let counts = try SearchIndex(store: store).documentCounts()
        print("History tracking installed for \(model.entities.map { "\($0.name) (\($0.table))" }.joined(separator: ", ")).")
        print("Index up to date: \(counts.values.reduce(0, +)) documents, token \(summary.token).")
    }
}
