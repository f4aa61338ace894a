/// The seed server's rules, which the default scenarios keep in this relative order.
public enum SeedRules {
    /// `GET /isUserNameAvailable`.
    public static let userName = ["missing", "emptyUserName", "tooShort", "illegalName", "serverError", "maintenance",
                                  "maintenanceForever", "illegalResponse", "taken", "available"]
    /// `POST /login`.
    public static let login = ["malformedBody", "missingField", "invalidEmail", "passwordTooShort", "serverError",
                               "maintenance", "illegalResponse", "success", "invalidCredentials", "unknownUser"]
}
