extension Duration {
    /// The duration in seconds, for SQLite's and Foundation's `TimeInterval` APIs.
    package var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
