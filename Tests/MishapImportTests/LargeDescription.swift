import Foundation

/// A large OpenAPI 3.0 description made by the tests (never committed): `resources` resources,
/// each with a list path and an item path (GET list, GET, PUT, DELETE: four operations), items
/// made of `allOf` (a shared base and their own part), a `oneOf` pet, a nullable note, an enum,
/// a chain of `levels` schemas each referring to the next, and a schema that contains itself.
enum LargeDescription {
    static func json(resources: Int, levels: Int) throws -> Data {
        var schemas: [String: Any] = [
            "Base": [
                "type": "object", "required": ["id", "createdAt"],
                "properties": ["id": ["type": "integer", "format": "int64"], "createdAt": ["type": "string", "format": "date-time"]],
            ],
            "Cat": ["type": "object", "required": ["meows"], "properties": ["meows": ["type": "boolean"]]],
            "Dog": ["type": "object", "required": ["barks"], "properties": ["barks": ["type": "boolean"]]],
            "Node": [
                "type": "object", "required": ["label"],
                "properties": ["label": ["type": "string"], "children": ["type": "array", "items": ["$ref": "#/components/schemas/Node"]]],
            ],
            "Error": ["type": "object", "required": ["message"], "properties": ["message": ["type": "string"]]],
        ]
        for level in 0..<levels {
            var properties: [String: Any] = ["depth": ["type": "integer", "example": level]]
            if level + 1 < levels { properties["next"] = ["$ref": "#/components/schemas/Level\(level + 1)"] }
            schemas["Level\(level)"] = ["type": "object", "required": ["depth"], "properties": properties]
        }
        var paths: [String: Any] = [:]
        for index in 0..<resources {
            schemas["Item\(index)"] = ["allOf": [
                ["$ref": "#/components/schemas/Base"],
                [
                    "type": "object", "required": ["name", "kind", "tags"],
                    "properties": [
                        "name": ["type": "string", "example": "item \(index)"],
                        "kind": ["type": "string", "enum": ["small", "large"]],
                        "note": ["type": "string", "nullable": true],
                        "tags": ["type": "array", "items": ["type": "string"]],
                        "pet": ["oneOf": [["$ref": "#/components/schemas/Cat"], ["$ref": "#/components/schemas/Dog"]]],
                        "level": ["$ref": "#/components/schemas/Level0"],
                        "tree": ["$ref": "#/components/schemas/Node"],
                    ],
                ],
            ]]
            let item: [String: Any] = ["$ref": "#/components/schemas/Item\(index)"]
            let error: [String: Any] = ["description": "No such item", "content": ["application/json": ["schema": ["$ref": "#/components/schemas/Error"]]]]
            func ok(_ schema: [String: Any]) -> [String: Any] { ["description": "ok", "content": ["application/json": ["schema": schema]]] }
            paths["/resources\(index)"] = [
                "get": ["operationId": "list\(index)", "responses": ["200": ok(["type": "array", "items": item]), "500": error]],
            ]
            paths["/resources\(index)/{id}"] = [
                "get": ["operationId": "get\(index)", "responses": ["200": ok(item), "404": error]],
                "put": ["operationId": "put\(index)", "responses": ["200": ok(item), "404": error, "422": error]],
                "delete": ["operationId": "delete\(index)", "responses": ["204": ["description": "gone"], "404": error]],
            ]
        }
        let document: [String: Any] = [
            "openapi": "3.0.3", "info": ["title": "Large", "version": "1"],
            "paths": paths, "components": ["schemas": schemas],
        ]
        return try JSONSerialization.data(withJSONObject: document, options: [.sortedKeys])
    }
}
