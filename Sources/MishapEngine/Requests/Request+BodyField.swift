extension Request {
    /// The value of a top-level field of the body, read as `when.body` reads it: a form field
    /// of an `application/x-www-form-urlencoded` body, or a member of a JSON object (numbers and
    /// booleans as their text); nil when there is no such field.
    public func bodyField(_ name: String) -> String? {
        RequestBody(of: self).value(at: [name])
    }
}
