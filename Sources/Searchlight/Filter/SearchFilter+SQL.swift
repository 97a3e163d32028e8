import GRDB
import SearchlightHistory

extension SearchFilter {
    /// The filter as an SQL condition with bound arguments, the attributes' names mapped to
    /// column references by `column`; nil when `column` has none for one of them (the entity
    /// does not declare it: nothing of it matches). Values are always arguments (`?`), never
    /// text of the SQL, and the condition is parenthesized.
    ///
    /// ```swift
    /// try SearchFilter(parsing: #"year >= 2020 AND tag IN ("swift", 'go')"#).sql { "a." + SQLQuoting.identifier($0) }
    /// // ("((a."year" >= ?) AND (a."tag" IN (?,?)))", [2020, "swift", "go"])
    /// ```
    package func sql(column: (String) -> String?) -> (sql: String, arguments: [DatabaseValue])? {
        var arguments: [DatabaseValue] = []
        func render(_ filter: SearchFilter) -> String? {
            switch filter {
            case let .compare(name, comparison, value):
                guard let column = column(name) else { return nil }
                arguments.append(value.databaseValue)
                return "(\(column) \(comparison == .notEqual ? "<>" : comparison.rawValue) ?)"
            case let .oneOf(name, values):
                guard let column = column(name) else { return nil }
                arguments += values.map(\.databaseValue)
                return "(\(column) IN (\(databaseQuestionMarks(count: values.count))))"
            case let .isNull(name):
                guard let column = column(name) else { return nil }
                return "(\(column) IS NULL)"
            case let .not(inner):
                return render(inner).map { "(NOT \($0))" }
            case let .and(a, b):
                guard let a = render(a), let b = render(b) else { return nil }
                return "(\(a) AND \(b))"
            case let .or(a, b):
                guard let a = render(a), let b = render(b) else { return nil }
                return "(\(a) OR \(b))"
            }
        }
        return render(self).map { ($0, arguments) }
    }
}
