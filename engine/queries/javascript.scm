; JavaScript (and JSX): declarations and imports for ctxtui's parser.
; Member assignments (`res.send = function send() {}`) are methods named after the property,
; qualified by the object they are assigned to (@receiver).

(class_declaration name: (identifier) @name) @definition.class
(class name: (identifier) @name) @definition.class
(function_declaration name: (identifier) @name) @definition.function
(generator_function_declaration name: (identifier) @name) @definition.function
(method_definition name: (property_identifier) @name) @definition.method

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

(pair
  key: (property_identifier) @name
  value: [(function_expression) (arrow_function)]) @definition.method

(import_statement source: (string) @import) @import.statement
(export_statement source: (string) @import) @import.statement
(call_expression
  function: (identifier) @_require
  arguments: (arguments . (string) @import)
  (#eq? @_require "require")) @import.statement
(call_expression
  function: (import)
  arguments: (arguments . (string) @import)) @import.statement
