import Foundation
import GRDB
import SearchlightHistory

/// The index's vocabulary: every word of the indexed documents, with the number of documents
/// that hold it. Typo-tolerant search finds the words near a misspelled one in it
/// (``TermNeighbourhood``) and suggestions complete a prefix from it, by document frequency.
///
/// The indexer keeps it in step with the text **in the same transaction**: each document's
/// words are the tokens SQLite's own tokenizer makes of its prepared text (the index's tokenizer,
/// through GRDB's tokenizer API), counted once per document. A batch adds and subtracts its
/// documents' words in memory, then writes each changed word once:
/// ```sql
/// INSERT INTO searchlight_terms_g<N>("term", "documents") VALUES (?, ?)
///   ON CONFLICT("term") DO UPDATE SET "documents" = "documents" + excluded."documents";
/// -- a decrease: the count goes down, or the word goes if no document holds it any more
/// -- (of the two, the one that came true more often in this flush first; the other if it did nothing)
/// UPDATE searchlight_terms_g<N> SET "documents" = "documents" + ?2 WHERE "term" = ?1 AND "documents" + ?2 > 0;
/// DELETE FROM searchlight_terms_g<N> WHERE "term" = ?1 AND "documents" + ?2 <= 0;
/// ```
/// Kept words: tokens of at most ``maximumTermBytes`` bytes with no CJK character (a CJK
/// character is a token of its own, and a one-character edit makes another word). Only word
/// tokenizers keep a vocabulary (``isKept(for:)``): not trigram, whose tokens are no words, nor
/// porter, whose tokens are stems.
package struct IndexVocabulary {
    /// Longer tokens (hashes, URLs with `tokenchars`) are no words to correct or complete.
    package static let maximumTermBytes = 64

    /// Whether an index with this text preparation keeps a vocabulary.
    package static func isKept(for text: IndexedText) -> Bool {
        text.segmentsCJK && text.tokenizerArguments.first?.lowercased() != "porter"
    }

    /// Whether the tokenizer's token `term` belongs in the vocabulary.
    package static func keeps(_ term: some StringProtocol) -> Bool {
        let utf8 = term.utf8
        guard !utf8.isEmpty, utf8.count <= maximumTermBytes else { return false }
        if utf8.allSatisfy({ $0 < 0x80 }) { return true }
        return !term.unicodeScalars.contains { IndexedText.isCJK($0) || $0 == IndexedText.breakToken || $0 == IndexedText.separator }
    }

    private let tokenizer: any FTS5Tokenizer
    private let table: String
    /// Word counts to add (positive) or remove (negative), by word, and the document being counted.
    private let counts = Counts()

    /// A vocabulary writer for `table` (unquoted), tokenizing with `text`'s tokenizer on `db`.
    package init(table: String, text: IndexedText, _ db: Database) throws {
        self.table = table
        tokenizer = try db.makeTokenizer(FTS5TokenizerDescriptor(components: text.tokenizerArguments))
    }

    /// Counts a document's words once: `sign` 1 when it enters the index, -1 when it leaves.
    package mutating func count(_ fields: [String], sign: Int) {
        counts.tally.pointee.startDocument(sign: sign)
        for field in fields { Self.collect(field, with: tokenizer, into: counts.tally) }
    }

    /// Counts the change from `old` to `new` (nothing when the text did not change).
    package mutating func replace(_ old: [String], with new: [String]) {
        guard old != new else { return }
        count(old, sign: -1)
        count(new, sign: 1)
    }

    /// Writes the counted changes and forgets them, one statement a word. (Statements of 32
    /// rows cost more a word here, measured: 5,500 instructions against 4,500.)
    package mutating func flush(_ db: Database) throws {
        let table = SQLQuoting.identifier(self.table)
        var upsert: RawStatement?, delete: RawStatement?, decrease: RawStatement?
        // Decreased words that went, and that stayed.
        var vanished = 0, kept = 0
        try counts.tally.pointee.forEachChange { term, delta in
            if delta > 0 {
                if upsert == nil {
                    upsert = try RawStatement("""
                        INSERT INTO \(table)("term", "documents") VALUES (?, ?) \
                        ON CONFLICT("term") DO UPDATE SET "documents" = "documents" + excluded."documents"
                        """, db)
                }
                try upsert!.execute(text: term, integer: Int64(delta))
                return
            }
            // A decrease: the count goes down, or, when no document holds the word any more, the
            // word goes. Each is a statement that does nothing in the other case, so the one that
            // came true more often in this flush goes first (deleting many documents of a small
            // index makes many words go; a large one mostly keeps them).
            if decrease == nil {
                decrease = try RawStatement("UPDATE \(table) SET \"documents\" = \"documents\" + ?2 WHERE \"term\" = ?1 AND \"documents\" + ?2 > 0", db)
                delete = try RawStatement("DELETE FROM \(table) WHERE \"term\" = ?1 AND \"documents\" + ?2 <= 0", db)
            }
            let deleteFirst = vanished > kept
            let (first, second) = deleteFirst ? (delete!, decrease!) : (decrease!, delete!)
            let firstDidIt = try first.execute(text: term, integer: Int64(delta)) > 0
            if !firstDidIt { try second.execute(text: term, integer: Int64(delta)) }
            // The word went when the DELETE did it.
            if firstDidIt == deleteFirst { vanished += 1 } else { kept += 1 }
        }
        counts.tally.pointee.removeAll()
    }

    /// The counts of a batch (``TermTally``), owned by a class so that a copy of the
    /// vocabulary shares them and the tokenizer's C callback reaches them by pointer.
    private final class Counts {
        let tally: UnsafeMutablePointer<TermTally>

        init() {
            tally = .allocate(capacity: 1)
            tally.initialize(to: TermTally())
        }

        deinit {
            tally.deinitialize(count: 1)
            tally.deallocate()
        }
    }

    /// Counts the kept tokens of `text` into `tally`, through the tokenizer's C entry point
    /// (GRDB's `tokenize(document:)` makes a `Data` and an array entry per token).
    private static func collect(_ text: String, with tokenizer: any FTS5Tokenizer, into tally: UnsafeMutablePointer<TermTally>) {
        var text = text
        text.withUTF8 { buffer in
            guard let base = buffer.baseAddress, !buffer.isEmpty else { return }
            _ = tokenizer.tokenize(context: UnsafeMutableRawPointer(tally), tokenization: .document,
                                   pText: UnsafeRawPointer(base).assumingMemoryBound(to: CChar.self),
                                   nText: CInt(buffer.count)) { context, flags, token, length, _, _ in
                // FTS5_TOKEN_COLOCATED (1): a synonym at the same position, no word of the text.
                guard let context, let token, length > 0, flags & 1 == 0 else { return 0 }
                let bytes = UnsafeRawBufferPointer(start: token, count: Int(length))
                guard IndexVocabulary.keeps(bytes) else { return 0 }
                context.assumingMemoryBound(to: TermTally.self).pointee.add(bytes)
                return 0
            }
        }
    }

    /// Whether the token `bytes` belongs in the vocabulary (``keeps(_:)``), with no string made
    /// for an ASCII word.
    private static func keeps(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard !bytes.isEmpty, bytes.count <= maximumTermBytes else { return false }
        var high: UInt8 = 0
        for byte in bytes { high |= byte }
        if high < 0x80 { return true }
        // A CJK character is a token of its own, left out at its first scalar with no string
        // made (the Chinese man pages' pass read about 7,000 of them a page).
        var iterator = bytes.makeIterator()
        var decoder = UTF8()
        if case let .scalarValue(first) = decoder.decode(&iterator), IndexedText.isCJK(first) { return false }
        return keeps(String(decoding: bytes, as: UTF8.self))
    }
}

extension IndexVocabulary {
    /// How many words of the stored vocabulary of `schema`'s generation differ from what FTS5
    /// itself counts in the entities' tables (`fts5vocab`, summed over entities): missing, extra,
    /// or with another count, and up to three of them; 0 for an index that keeps no vocabulary.
    /// ```sql
    /// CREATE VIRTUAL TABLE IF NOT EXISTS temp."searchlight_vocab_<fts table>" USING fts5vocab(main, '<fts table>', 'row');
    /// SELECT term, doc FROM temp."searchlight_vocab_<fts table>";
    /// ```
    package static func differences(schema: IndexSchema, layout: IndexLayout, _ db: Database) throws -> (count: Int, examples: [String]) {
        guard layout.keepsVocabulary else { return (0, []) }
        var expected = try counted(schema: schema, layout: layout, db)
        var examples: [String] = []
        var differences = 0
        let table = SQLQuoting.identifier(schema.termTable)
        // A word that is no text, or holds a NUL, is no word of the index (it would read back
        // as one through a C string): each is a difference.
        let malformed = try Int.fetchOne(db, sql: "SELECT count(*) FROM \(table) WHERE typeof(\"term\") <> 'text' OR instr(CAST(\"term\" AS BLOB), x'00') > 0") ?? 0
        if malformed > 0 {
            differences += malformed
            examples.append("\(malformed) stored \(malformed == 1 ? "word is" : "words are") no text or \(malformed == 1 ? "holds" : "hold") a NUL")
        }
        let rows = try Row.fetchCursor(db, sql: "SELECT \"term\", \"documents\" FROM \(table) WHERE typeof(\"term\") = 'text' AND instr(CAST(\"term\" AS BLOB), x'00') = 0")
        while let row = try rows.next() {
            let term: String = row[0]
            // (A count that is no integer is a difference too.)
            let value: DatabaseValue = row[1]
            let stored: Int64? = if case let .int64(integer) = value.storage { integer } else { nil }
            let count = expected.removeValue(forKey: term) ?? 0
            // (A stored word no document holds is a difference even with a count of 0.)
            if count > 0, stored == Int64(count) { continue }
            differences += 1
            if examples.count < 3 { examples.append("\(term.debugDescription) \(stored.map(String.init) ?? value.description) (the text: \(count))") }
        }
        for (term, count) in expected.sorted(by: { $0.key < $1.key }) where examples.count < 3 {
            examples.append("\(term.debugDescription) 0 (the text: \(count))")
        }
        return (differences + expected.count, examples)
    }
}

extension IndexVocabulary {
    /// Each kept word's documents, as FTS5 counts them in the entities' tables.
    private static func counted(schema: IndexSchema, layout: IndexLayout, _ db: Database) throws -> [String: Int] {
        var counts: [String: Int] = [:]
        for entity in layout.entities {
            let name = schema.ftsTable(entity.id)
            let table = SQLQuoting.identifier("searchlight_vocab_" + name)
            try db.execute(sql: "CREATE VIRTUAL TABLE IF NOT EXISTS temp.\(table) USING fts5vocab(main, \(SQLQuoting.literal(name)), 'row')")
            let rows = try Row.fetchCursor(db, sql: "SELECT term, doc FROM temp.\(table)")
            while let row = try rows.next() {
                let term: String = row[0]
                if keeps(term) { counts[term, default: 0] += row[1] as Int }
            }
        }
        return counts
    }

    /// Counts the vocabulary of `schema`'s generation again from FTS5's own counts (repair, after
    /// the index's text was changed behind the indexer's back), in the caller's transaction.
    package static func recount(schema: IndexSchema, layout: IndexLayout, _ db: Database) throws {
        guard layout.keepsVocabulary else { return }
        let counts = try counted(schema: schema, layout: layout, db)
        let table = SQLQuoting.identifier(schema.termTable)
        try db.execute(sql: "DELETE FROM \(table)")
        let insert = try RawStatement("INSERT INTO \(table)(\"term\", \"documents\") VALUES (?, ?)", db)
        for (term, documents) in counts.sorted(by: { $0.key < $1.key }) { try insert.execute([.text(term), .integer(Int64(documents))]) }
    }
}
