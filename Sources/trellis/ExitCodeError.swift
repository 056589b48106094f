import ArgumentParser

/// Exit status 1 after an error that has already been reported on standard error.
typealias ExitCodeError = ExitCode

extension ExitCode {
    init() { self = .failure }
}
