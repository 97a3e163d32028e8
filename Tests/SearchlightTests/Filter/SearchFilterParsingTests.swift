import Foundation
import Testing
@testable import Searchlight
import SearchlightHistory
import SearchlightTestSupport

/// `SearchFilter(parsing:)`: the grammar, its precedence, its bounds, and one-line errors that
/// name the position and what was expected.
@Suite struct SearchFilterParsingTests {
    func parse(_ text: String) throws -> SearchFilter { try SearchFilter(parsing: text) }

    func error(_ text: String) -> String {
        do {
            _ = try SearchFilter(parsing: text)
            return "no error"
        } catch {
            #expect(error.code == .invalidFilter, "\(text): \(error.code)")
            #expect(!error.message.contains("\n"), "one line: \(error.message)")
            return error.message
        }
    }

    @Test func everyOperatorAndValueForm() throws {
        let year = SearchFilter.Attribute("year")
        #expect(try parse("year = 2020") == (year == 2020))
        #expect(try parse("year == 2020") == (year == 2020))
        #expect(try parse("year != 2020") == (year != 2020))
        #expect(try parse("year <> 2020") == (year != 2020))
        #expect(try parse("year < -3") == (year < -3))
        #expect(try parse("year <= +3") == (year <= 3))
        #expect(try parse("year > 1.5") == (year > 1.5))
        #expect(try parse("year >= 2e3") == (year >= 2000.0))
        #expect(try parse("year >= .5") == (year >= 0.5))
        #expect(try parse("year = 99999999999999999999") == .compare("year", .equal, .real(1e20)), "too large for 64 bits: a real, as SQLite reads it")
        #expect(try parse(#"tag = "it""s""#) == .compare("tag", .equal, .text(#"it"s"#)))
        #expect(try parse("tag = 'it''s'") == .compare("tag", .equal, .text("it's")))
        #expect(try parse("tag = ''") == .compare("tag", .equal, .text("")))
        #expect(try parse(#"tag IN ("swift", 'go', 3)"#) == SearchFilter.Attribute("tag").in(["swift", "go", 3]))
        #expect(try parse("tag not in (1)") == .not(.oneOf("tag", [1])))
        #expect(try parse("tag IS NULL") == .isNull("tag"))
        #expect(try parse("tag is not null") == SearchFilter.Attribute("tag").isNotNull)
        #expect(try parse("`in` = 1") == .compare("in", .equal, 1), "a keyword as a name, between backticks")
        #expect(try parse("`a``b c` = 1") == .compare("a`b c", .equal, 1))
        #expect(try parse("année=2020") == .compare("année", .equal, 2020), "no spaces needed; names may be any letters")
        let tag = SearchFilter.Attribute("tag")
        #expect(try parse(#"year >= 2020 AND (tag = "swift" OR tag IN ("go", "rust"))"#) == (year >= 2020 && (tag == "swift" || tag.in(["go", "rust"]))),
                "the README's filter, as text and in code")
    }

    @Test func notBindsTighterThanAndWhichBindsTighterThanOr() throws {
        let a = SearchFilter.compare("a", .equal, 1), b = SearchFilter.compare("b", .equal, 2), c = SearchFilter.compare("c", .equal, 3)
        #expect(try parse("a = 1 OR b = 2 AND c = 3") == .or(a, .and(b, c)))
        #expect(try parse("a = 1 AND b = 2 OR c = 3") == .or(.and(a, b), c))
        #expect(try parse("NOT a = 1 AND b = 2") == .and(.not(a), b))
        #expect(try parse("NOT a = 1 OR b = 2") == .or(.not(a), b))
        #expect(try parse("NOT (a = 1 OR b = 2)") == .not(.or(a, b)))
        #expect(try parse("a = 1 and (b = 2 or c = 3)") == .and(a, .or(b, c)))
        #expect(try parse("not not a = 1") == .not(.not(a)))
        #expect(try parse("a = 1 AND b = 2 AND c = 3") == .and(.and(a, b), c), "left to right")
    }

    @Test func descriptionParsesBackToTheSameFilter() throws {
        let filters: [SearchFilter] = [
            .or(.and(.compare("year", .greaterOrEqual, 2020), .not(.isNull("tag"))), .oneOf("tag", ["a\"b", 1.25, -7])),
            .not(.compare("odd `name`", .notEqual, .text("x'y"))),
        ]
        for filter in filters { #expect(try parse(filter.description) == filter, "\(filter)") }
    }

    @Test func errorsNameThePositionAndWhatWasExpected() {
        #expect(error("") == "invalid filter at character 1: expected a condition such as year >= 2020, found the end of the filter")
        #expect(error("year >= AND") == #"invalid filter at character 9: expected a value: a number, or text in quotes ("swift" or 'swift'), found "AND""#)
        #expect(error("year 2020") == "invalid filter at character 6: expected an operator after year: =, !=, <>, <, <=, >, >=, IN, IS NULL or IS NOT NULL, found the number 2020")
        #expect(error("year = 1 tag = 2") == #"invalid filter at character 10: expected AND, OR or the end of the filter, found "tag""#)
        #expect(error("(year = 1") == "invalid filter at character 10: expected \")\" (or AND, OR), found the end of the filter")
        #expect(error("year = 'open") == "invalid filter at character 8: the text opened here has no closing '")
        #expect(error("year = 12abc") == "invalid filter at character 8: \"12a\" is not a number (quote text, and put backticks around a name that starts with a digit)")
        #expect(error("year = 1.2.3") == "invalid filter at character 8: \"1.2.3\" is not a number")
        #expect(error("year ; drop") == "invalid filter at character 6: unexpected \";\" (expected an attribute, a value, an operator or a parenthesis)")
        #expect(error("year = NULL") == #"invalid filter at character 8: expected a value (use IS NULL to test for NULL), found "NULL""#)
        #expect(error("year IN ()") == "invalid filter at character 10: expected a value: a number, or text in quotes, found \")\"")
        #expect(error("year IS 3") == "invalid filter at character 9: expected NULL or NOT NULL, found the number 3")
        #expect(error("AND = 1") == "invalid filter at character 1: expected an attribute name (put backticks around a name that is a keyword: `in`), found \"AND\"")
        #expect(error("year = tag") == #"invalid filter at character 8: expected a value: a number, or text in quotes ("swift" or 'swift'), found "tag""#)
    }

    @Test func boundsOnDepthTermsValuesAndLength() {
        #expect(error(String(repeating: "(", count: 40) + "a = 1" + String(repeating: ")", count: 40)).contains("nested deeper than 32 levels"))
        #expect(error(String(repeating: "NOT ", count: 40) + "a = 1").contains("nested deeper than 32 levels"))
        #expect(error((0..<65).map { "a = \($0)" }.joined(separator: " AND ")) == "invalid filter: more than 64 comparisons")
        #expect((try? parse((0..<64).map { "a = \($0)" }.joined(separator: " OR "))) != nil, "64 comparisons are allowed")
        #expect(error("a IN (" + (0...1_000).map(String.init).joined(separator: ",") + ")").contains("more than 1000 values"))
        #expect(error(String(repeating: " ", count: 10_001) + "a = 1") == "invalid filter: 10006 characters; at most 10000 are allowed")
        // Built in code: the same bounds, checked before any deep recursion.
        var deep = SearchFilter.compare("a", .equal, 1)
        for _ in 0..<1_000 { deep = .and(deep, .compare("a", .equal, 1)) }
        #expect(throws: SearchlightError.self) { try deep.validate() }
    }

    @Test func compilesToBoundArgumentsOnly() throws {
        let filter = try parse(#"year >= 2020 AND (tag IN ("x'); DROP TABLE notes; --", 'go') OR NOT tag IS NULL)"#)
        let (sql, arguments) = try #require(filter.sql { "a.\"\($0)\"" })
        #expect(sql == #"((a."year" >= ?) AND ((a."tag" IN (?,?)) OR (NOT (a."tag" IS NULL))))"#)
        #expect(arguments == [2020.databaseValue, "x'); DROP TABLE notes; --".databaseValue, "go".databaseValue])
        #expect(filter.sql { $0 == "year" ? "y" : nil } == nil, "an attribute the entity lacks: nothing of it matches")
    }
}
