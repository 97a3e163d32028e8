import Foundation

/// Whether history records each entity's changes now, and what Searchlight followed when the
/// host app changed its schema.
///
/// Searchlight checks the schema whenever it changes (`PRAGMA schema_version`, read by every
/// consumer batch and when a store opens) and heals what it can with no manual step:
/// - triggers lost with a remade table are reinstalled, and the gap is recorded in history
///   (consumers behind it get ``HistoryResync/Reason-swift.enum/captureInterrupted(checkpoint:through:)``);
/// - `ALTER TABLE … RENAME TO` and `RENAME COLUMN` are followed: the stored model takes the new
///   names (``followed`` says what was followed);
/// - an entity whose table was dropped, or whose table lost a column the model needs, stops
///   being captured (``Entity/state``) while the others go on; its documents leave the index.
///   A table created again under the same name is picked up again.
///
/// ```swift
/// let status = try store.healCapture()
/// for entity in status.entities where entity.state != .capturing {
///     print(entity.name, entity.state)   // Note  tableMissing("notes")
/// }
/// ```
public struct CaptureStatus: Hashable, Sendable, Codable {
    /// Whether an entity's changes are recorded.
    public enum State: Hashable, Sendable, Codable, CustomStringConvertible {
        /// Its triggers are installed: every change is recorded.
        case capturing
        /// Its table does not exist (dropped, or renamed in a way that could not be followed).
        case tableMissing(String)
        /// Its table no longer fits the model (a column the model needs was dropped); the
        /// message says which, and what to do.
        case modelMismatch(String)
        /// A state this release does not know (its `kind`), recorded by a newer release of
        /// Searchlight. Whether changes are recorded is unknown, so it counts as not capturing
        /// (``CaptureStatus/notCapturing``): upgrade Searchlight to read it.
        case unknown(String)

        private enum CodingKeys: String, CodingKey { case kind, table, message }

        /// `{"kind": "capturing"}`, `{"kind": "tableMissing", "table": …}`, `{"kind": "modelMismatch", "message": …}`.
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            switch self {
            case .capturing: try container.encode("capturing", forKey: .kind)
            case .tableMissing(let table): try container.encode("tableMissing", forKey: .kind); try container.encode(table, forKey: .table)
            case .modelMismatch(let message): try container.encode("modelMismatch", forKey: .kind); try container.encode(message, forKey: .message)
            case .unknown(let kind): try container.encode(kind, forKey: .kind)
            }
        }

        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            switch try container.decode(String.self, forKey: .kind) {
            case "capturing": self = .capturing
            case "tableMissing": self = .tableMissing(try container.decode(String.self, forKey: .table))
            case "modelMismatch": self = .modelMismatch(try container.decode(String.self, forKey: .message))
            // Written by a newer release: never read as "capturing".
            case let kind: self = .unknown(kind)
            }
        }

        public var description: String {
            switch self {
            case .capturing: "capturing"
            case .tableMissing(let table): "table \"\(table)\" is missing: its documents left the index; it is picked up again if the table is created again, and if it was renamed, once a model that names the new table is installed (searchlight init)"
            case .modelMismatch(let message): message
            case .unknown(let kind): "capture state \"\(kind)\" is unknown to this release of Searchlight (a newer release recorded it): whether changes are recorded is unknown; upgrade Searchlight"
            }
        }
    }

    /// One entity of the installed model.
    public struct Entity: Hashable, Sendable, Codable {
        public var name: String
        /// Its table now (after followed renames).
        public var table: String
        public var state: State
    }

    /// A rename Searchlight followed.
    public struct FollowedRename: Hashable, Sendable, Codable, CustomStringConvertible {
        public enum Kind: String, Hashable, Sendable, Codable { case table, column }
        public var entity: String
        public var kind: Kind
        public var from: String
        public var to: String
        /// When it was followed.
        public var date: Date

        public var description: String {
            "entity \(entity): \(kind.rawValue) \"\(from)\" renamed to \"\(to)\" (followed)"
        }
    }

    public var entities: [Entity]
    /// Renames followed since the model was last installed (`searchlight init`), oldest first.
    public var followed: [FollowedRename]

    /// Entities whose changes are not recorded now.
    public var notCapturing: [Entity] { entities.filter { $0.state != .capturing } }
}
