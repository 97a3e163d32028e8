import Foundation
import GRDB

/// The SQL function `searchlight_boost(value, halfLifeDays, now)` of ranking hints
/// (``SearchlightHistory/SearchlightModel/RankingHint``), registered on a search's connection
/// (portable: SQLite's own `ln()` and `pow()` exist only in builds with its math functions).
///
/// - `halfLifeDays` NULL (popularity): `ln(1 + max(0, value))` for an INTEGER or REAL value, 0
///   for anything else.
/// - otherwise (recency; `value` and `now` in unix seconds): `0.5 ^ (max(0, now - value) /
///   86400 / halfLifeDays)`, 0 for a value that is not a number.
enum RankingBoost {
    static let name = "searchlight_boost"

    static let function = DatabaseFunction(name, argumentCount: 3, pure: true) { values -> Double in
        let value: Double? = switch values[0].storage {
        case let .int64(number): Double(number)
        case let .double(number): number.isNaN ? nil : number
        default: nil
        }
        guard let value else { return 0 }
        guard case let .double(halfLife) = values[1].storage.asDouble, case let .double(now) = values[2].storage.asDouble else {
            return log1p(max(0, min(value, .greatestFiniteMagnitude)))
        }
        let age = max(0, now - value) / 86_400
        return pow(0.5, age / halfLife)
    }
}

private extension DatabaseValue.Storage {
    /// An INTEGER as a REAL; other values as they are.
    var asDouble: DatabaseValue.Storage {
        if case let .int64(number) = self { return .double(Double(number)) }
        return self
    }
}
