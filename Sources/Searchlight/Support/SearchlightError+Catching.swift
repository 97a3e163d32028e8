import SearchlightHistory

extension SearchlightError {
    /// Runs `body`, converting what it throws into a `SearchlightError` that says what was
    /// being done.
    static func catching<T>(_ doing: @autoclosure () -> String, _ body: () throws -> T) throws(SearchlightError) -> T {
        do { return try body() } catch { throw SearchlightError(wrapping: error, doing: doing()) }
    }
}

extension SearchlightError {
    /// Like ``catching(_:_:)``, for work that runs closures of the caller (document
    /// builders): an error of theirs becomes ``Code-swift.struct/bodyFailed`` with it as the cause.
    static func catchingCallbacks<T>(_ doing: @autoclosure () -> String, _ body: () throws -> T) throws(SearchlightError) -> T {
        do { return try body() } catch { throw SearchlightError(wrappingClosureError: error, doing: doing()) }
    }
}
