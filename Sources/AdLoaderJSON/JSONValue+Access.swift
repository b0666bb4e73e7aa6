extension JSONValue {
    /// The member called `key` of an object (nil for anything else, or when absent).
    public subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.key == key }?.value
    }

    /// The text of a string.
    public var string: String? {
        if case .string(let text) = self { text } else { nil }
    }

    /// The value of a number.
    public var number: Double? {
        if case .number(let value, _) = self { value } else { nil }
    }

    /// A number without a fraction that fits an `Int`.
    public var integer: Int? {
        guard case .number(let value, _) = self, value == value.rounded(), abs(value) < 9e15 else { return nil }
        return Int(value)
    }

    public var bool: Bool? {
        if case .bool(let flag) = self { flag } else { nil }
    }

    /// The items of an array.
    public var array: [JSONValue]? {
        if case .array(let items) = self { items } else { nil }
    }

    /// The members of an object, in document order.
    public var members: [(key: String, value: JSONValue)]? {
        if case .object(let members) = self { members } else { nil }
    }

    public var isNull: Bool {
        if case .null = self { true } else { false }
    }
}
