/// The seed server's rules, which the default scenarios keep in this relative order.
public enum SeedRules {
    /// `GET /isUserNameAvailable`.
    public static let userName = ["missing", "empty", "tooShort", "illegalName", "databaseCorrupted", "maintenance",
                                  "maintenanceForever", "illegalResponse", "taken", "available"]
    /// `POST /login`.
    public static let login = ["malformedBody", "missingField", "invalidEmail", "passwordTooShort", "databaseCorrupted",
                               "maintenance", "illegalResponse", "success", "invalidCredentials", "unknownUser"]
}
