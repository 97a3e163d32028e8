import Foundation
import GRDB
import SearchlightHistory

/// The demo: a database of Jargon File entries, and the plain-SQL edits it makes to show the
/// index following writes that bypass Searchlight.
public enum DemoDatabase {
    /// The demo's model: one entity, `Entry`, over the table `entries`.
    public static let model = try! SearchlightModel(entities: [
        SearchlightModel.Entity(name: "Entry", table: "entries", primaryKey: "id",
               fields: [SearchlightModel.Field(column: "title", weight: 10, role: .title), SearchlightModel.Field(column: "body")],
               preserveOnDelete: ["title"]),
    ])

    /// Creates `path` with the table `entries` holding every Jargon File entry (no Searchlight).
    /// Fails if the file exists.
    public static func create(at path: String) throws {
        guard !FileManager.default.fileExists(atPath: path) else {
            throw CocoaError(.fileWriteFileExists, userInfo: [NSFilePathErrorKey: path])
        }
        let entries = try DemoData.jargon()
        let queue = try DatabaseQueue(path: path)
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE entries(id TEXT PRIMARY KEY NOT NULL, title TEXT NOT NULL, body TEXT NOT NULL)")
            for entry in entries {
                try db.execute(sql: "INSERT INTO entries(id, title, body) VALUES (?, ?, ?)", arguments: [entry.id, entry.title, entry.body])
            }
        }
        try queue.close()
    }

    /// A plain-SQL edit of the demo, as another program would make it.
    public struct Edit: Sendable {
        /// What it does, for people.
        public var description: String
        /// The SQL, with no Searchlight code involved.
        public var sql: String
        /// A query that shows the effect.
        public var query: String
    }

    /// The edits the demo makes after indexing.
    public static let edits: [Edit] = [
        Edit(description: "UPDATE the entry 'kludge' so that it mentions 'duct tape'",
             sql: "UPDATE entries SET body = body || ' Often held together with duct tape.' WHERE title = 'kludge'",
             query: "\"duct tape\""),
        Edit(description: "INSERT a new entry 'searchlight'",
             sql: "INSERT INTO entries(id, title, body) VALUES ('demo-1', 'searchlight', 'A full-text indexer that follows every write to an SQLite database.')",
             query: "searchl*"),
        Edit(description: "DELETE every entry whose title starts with 'foo'",
             sql: "DELETE FROM entries WHERE title LIKE 'foo%'",
             query: "foo*"),
    ]

    /// Applies an edit through a plain connection (no history API, no author).
    public static func apply(_ edit: Edit, to database: any DatabaseWriter) throws {
        try database.write { try $0.execute(sql: edit.sql) }
    }
}
