; Go: declarations and imports for ctxtui's parser.
; A method is qualified by its receiver type (@receiver): `func (c *Command) Execute()`.

(function_declaration name: (identifier) @name) @definition.function
(method_declaration
  receiver: (parameter_list
    (parameter_declaration
      type: [
        (type_identifier) @receiver
        (pointer_type (type_identifier) @receiver)
        (generic_type type: (type_identifier) @receiver)
        (pointer_type (generic_type type: (type_identifier) @receiver))
      ]))
  name: (field_identifier) @name) @definition.method

(type_declaration (type_spec name: (type_identifier) @name type: (struct_type))) @definition.struct
(type_declaration (type_spec name: (type_identifier) @name type: (interface_type))) @definition.interface
(type_declaration
  (type_spec
    name: (type_identifier) @name
    type: [
      (type_identifier) (qualified_type) (generic_type) (pointer_type) (slice_type)
      (map_type) (array_type) (function_type) (channel_type)
    ])) @definition.type
(type_declaration (type_alias name: (type_identifier) @name)) @definition.type

(source_file (const_declaration (const_spec name: (identifier) @name) @definition.constant))

; The statement is the whole declaration: a grouped `import ( ... )` is one statement, so that a
; focused view keeping some of its specs keeps its `import (` and `)` lines around them.
(import_declaration (import_spec path: (interpreted_string_literal) @import)) @import.statement
(import_declaration
  (import_spec_list (import_spec path: (interpreted_string_literal) @import))) @import.statement
