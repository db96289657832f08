; TypeScript and TSX: declarations and imports for ctxtui's parser.
; The JavaScript patterns plus interfaces, type aliases, enums, abstract classes and namespaces.

(class_declaration name: (type_identifier) @name) @definition.class
(abstract_class_declaration name: (type_identifier) @name) @definition.class
(class name: (type_identifier) @name) @definition.class
(interface_declaration name: (type_identifier) @name) @definition.interface
(type_alias_declaration name: (type_identifier) @name) @definition.type
(enum_declaration name: (identifier) @name) @definition.enum
(internal_module name: (identifier) @name) @definition.module
(module name: (identifier) @name) @definition.module
(function_declaration name: (identifier) @name) @definition.function
(generator_function_declaration name: (identifier) @name) @definition.function
(function_signature name: (identifier) @name) @definition.function
(method_definition name: (property_identifier) @name) @definition.method
(abstract_method_signature name: (property_identifier) @name) @definition.method

(variable_declarator
  name: (identifier) @name
  value: [(arrow_function) (function_expression) (generator_function)]) @definition.function

(assignment_expression
  left: (member_expression
    object: (_) @receiver
    property: (property_identifier) @name)
  right: [(function_expression) (arrow_function) (generator_function)]) @definition.method

; Later patterns refine earlier ones for the same node: `Foo.prototype.bar` is qualified by
; Foo, and `exports.x = function` is an exported function rather than a method.
(assignment_expression
  left: (member_expression
    object: (member_expression
      object: (_) @receiver
      property: (property_identifier) @_prototype)
    property: (property_identifier) @name)
  right: [(function_expression) (arrow_function) (generator_function)]
  (#eq? @_prototype "prototype")) @definition.method

(assignment_expression
  left: (member_expression
    object: (_) @_exports
    property: (property_identifier) @name)
  right: [(function_expression) (arrow_function) (generator_function)]
  (#match? @_exports "^(module\\.)?exports$")) @definition.function

(assignment_expression
  left: (member_expression) @_lhs
  right: (function_expression name: (identifier) @name)
  (#eq? @_lhs "module.exports")) @definition.function

(import_statement source: (string) @import) @import.statement
(export_statement source: (string) @import) @import.statement
(call_expression
  function: (identifier) @_require
  arguments: (arguments . (string) @import)
  (#eq? @_require "require")) @import.statement
(call_expression
  function: (import)
  arguments: (arguments . (string) @import)) @import.statement
