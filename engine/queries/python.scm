; Python: declarations and imports for ctxtui's parser.
; @definition.<kind> marks the whole node, @name its name; @import the module as written,
; @import.member a name imported from it, @import.statement the statement for line numbers.

(class_definition name: (identifier) @name) @definition.class
(function_definition name: (identifier) @name) @definition.function

; The grammar may or may not show the expression_statement around an assignment.
(module
  (assignment left: (identifier) @name) @definition.constant
  (#match? @name "^[A-Z][A-Z0-9_]*$"))
(module
  (expression_statement
    (assignment left: (identifier) @name) @definition.constant)
  (#match? @name "^[A-Z][A-Z0-9_]*$"))

(import_statement name: (dotted_name) @import) @import.statement
(import_statement name: (aliased_import name: (dotted_name) @import)) @import.statement

(import_from_statement
  module_name: (_) @import
  name: (dotted_name) @import.member) @import.statement
(import_from_statement
  module_name: (_) @import
  name: (aliased_import name: (dotted_name) @import.member)) @import.statement
(import_from_statement
  module_name: (_) @import
  (wildcard_import)) @import.statement
