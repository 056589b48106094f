import TrellisApplication
import ArgumentParser
import Configuration
import Foundation
import Testing
@testable import trellis

/// Every setting's flag of `trellis run` follows from `SettingKey.all`: a property of `RunCommand`
/// named after each flag, none besides (but `--config` and `--watch-config`, which are not
/// settings), each given value landing on its key, and docs/configuration.md's flag column.
@Suite("Settings and their flags")
struct SettingFlagsTests {
    static let notSettings: Set<String> = ["config", "watch-config"]

    @Test("RunCommand declares a flag for each setting that names one, and no other")
    func sameFlags() throws {
        let command = try RunCommand.parse([])
        let declared = Set(SettingFlags.flags(of: command).map(\.name)).subtracting(Self.notSettings)
        #expect(declared == Set(SettingKey.byFlag.keys))
    }

    @Test("a value given by each flag lands on its setting's key", arguments: SettingKey.all.filter { $0.flag != nil })
    func flagSetsItsKey(setting: SettingKey) throws {
        let flag = "--" + (setting.flag ?? "")
        let (arguments, expected): ([String], ConfigContent) =
            switch setting.kind {
            case .string: ([flag, "x"], .string("x"))
            case .int: ([flag, "3"], .int(3))
            case .double: ([flag, "2.5"], .double(2.5))
            case .bool: ([flag], .bool(true))
            }
        let command = try RunCommand.parse(arguments)
        #expect(command.flagValues == [setting.key: expected])
    }

    @Test("the flag's help is the setting's, with its default and its key")
    func help() {
        let text = ArgumentHelp.setting("spam.limit").abstract
        #expect(text.hasPrefix(SettingKey.byKey["spam.limit"]!.help.dropLast()))
        #expect(text.hasSuffix(" Default: 15. [spam.limit]"))
        #expect(ArgumentHelp.setting("broker.username").abstract.hasSuffix("if any. [broker.username]"))
    }

    @Test("docs/configuration.md's table names each setting's flag")
    func documented() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let page = try String(contentsOf: root.appendingPathComponent("docs/configuration.md"), encoding: .utf8)
        for setting in SettingKey.all {
            let flag = setting.flag.map { " `--\($0)` " } ?? " "
            #expect(page.contains("| `\(setting.key)` | `\(setting.environmentName)` |\(flag)|"), "\(setting.key)")
        }
    }
}
