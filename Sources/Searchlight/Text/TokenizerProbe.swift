import GRDB
import Synchronization

/// Whether an FTS5 tokenizer keeps a character in its tokens, asked of SQLite's own tokenizer.
///
/// Which symbols count as word characters depends on the Unicode tables compiled into SQLite
/// (unicode61's are Unicode 6.1's: `👍` separates words, `🙂`, `₽` and private-use characters
/// are tokens) and on the tokenizer's options (`categories`, `tokenchars`, `separators`): the
/// answer comes from the same SQLite library that the index uses, through GRDB's tokenizer API,
/// on an in-memory connection of this process. Answers are cached.
///
/// ```swift
/// TokenizerProbe.keepsInToken("🙂", tokenizer: ["unicode61"]) // true with SQLite 3.40
/// TokenizerProbe.keepsInToken("™", tokenizer: ["unicode61"])  // false
/// ```
enum TokenizerProbe {
    private struct Key: Hashable {
        var tokenizer: [String]
        var scalar: Unicode.Scalar
    }

    /// At most this many answers are kept (user text may hold any characters).
    private static let cacheLimit = 4_096
    private static let answers = Mutex<[Key: Bool]>([:])
    /// A private in-memory connection: tokenizers need one, and an app's pool must not wait on us.
    private static let database: DatabaseQueue? = try? DatabaseQueue()

    /// Whether `tokenizer` (an FTS5 tokenizer spec, as its words) makes `scalar`, alone, a token.
    /// If SQLite cannot answer (no FTS5), it is taken as kept: a phrase with it still matches
    /// the text it was copied from.
    static func keepsInToken(_ scalar: Unicode.Scalar, tokenizer: [String]) -> Bool {
        let key = Key(tokenizer: tokenizer, scalar: scalar)
        if let known = answers.withLock({ $0[key] }) { return known }
        let kept = (try? database?.inDatabase { db in
            try !db.makeTokenizer(FTS5TokenizerDescriptor(components: tokenizer)).tokenize(document: String(scalar)).isEmpty
        }) ?? true
        answers.withLock { answers in
            if answers.count >= cacheLimit { answers.removeAll(keepingCapacity: true) }
            answers[key] = kept
        }
        return kept
    }
}
