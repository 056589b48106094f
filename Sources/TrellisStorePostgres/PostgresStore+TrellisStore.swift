import TrellisCore
import TrellisStore
/// The PostgreSQL store implements every store protocol (see the `PostgresStore+…` files), so it
/// can stand wherever the SQLite store does.
extension PostgresStore: TrellisStore {}
