import TrellisBroker
import TrellisServer
import TrellisStore

extension TrellisApplication {
    /// What `trellis run` reports of an error that stopped ``launch(_:flags:watchConfig:logger:)``:
    /// a problem of the machine or the settings (the broker cannot start, the store cannot open, a
    /// file cannot be read, settings that do not go together) as one ``CommandFailure`` line; any
    /// other error as it is.
    package static func failure(of error: any Error) -> any Error {
        switch error {
        case let error as MosquittoProcess.StartError: fail("\(error)")
        case let error as StoreError where error.code == .cannotOpen:
            fail("\(error); Trellis does not start and leaves the state as it is")
        case let error as StoreError: fail("\(error)")
        case let error as PlantsFileError: fail("\(error)")
        case let error as CredentialsError: fail("\(error)")
        case let error as SocketIOServer.PressTokenError: fail("\(error)")
        case let error as ConsoleServer.AccessError: fail("\(error)")
        case let error as StateAccessError: fail("\(error)")
        default: error
        }
    }
}
