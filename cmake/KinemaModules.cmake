# kinema's modules: one static library per folder src/<module>/ with its public headers in
# include/kinema/<module>/, linking only the modules below it (docs/architecture.md draws them).
#
# The build enforces the layers. All public headers live under one include/ folder, so a plain
# include path would let any module include any header. Instead each module compiles against an
# *include view*: a folder in the build tree holding links to its own headers and to those of
# the modules it may use (its dependencies, transitively), and nothing else. An upward or
# sideways include is then a missing file: it fails to build. Module-private headers stay in
# src/<module>/, which only that module's sources see.

set_property(GLOBAL PROPERTY KINEMA_MODULES "")

# kinema_module(NAME [DEPS module...] [PUBLIC_LIBS target...] [PRIVATE_LIBS target...])
#   NAME          the folder under src/ and include/kinema/; the target is kinema_NAME, exported
#                 (and aliased) as kinema::NAME
#   DEPS          the kinema modules NAME uses directly (each defined before NAME)
#   PUBLIC_LIBS   third-party targets NAME's public headers need
#   PRIVATE_LIBS  third-party targets only NAME's sources need
function(kinema_module name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "" "DEPS;PUBLIC_LIBS;PRIVATE_LIBS")
  set(closure ${name})
  foreach(dep ${arg_DEPS})
    if(NOT TARGET kinema_${dep})
      message(FATAL_ERROR "kinema module '${name}' depends on '${dep}', which is not defined "
                          "before it (modules are defined bottom-up)")
    endif()
    get_property(dep_closure GLOBAL PROPERTY KINEMA_MODULE_CLOSURE_${dep})
    list(APPEND closure ${dep_closure})
  endforeach()
  list(REMOVE_DUPLICATES closure)
  set_property(GLOBAL PROPERTY KINEMA_MODULE_CLOSURE_${name} ${closure})
  set_property(GLOBAL PROPERTY KINEMA_MODULE_DEPS_${name} ${arg_DEPS})

  # The include view: links to include/kinema/<module> for NAME and everything below it.
  set(view ${PROJECT_BINARY_DIR}/include_views/${name})
  file(REMOVE_RECURSE ${view})
  file(MAKE_DIRECTORY ${view}/kinema)
  foreach(module ${closure})
    if(EXISTS ${PROJECT_SOURCE_DIR}/include/kinema/${module})
      file(CREATE_LINK ${PROJECT_SOURCE_DIR}/include/kinema/${module} ${view}/kinema/${module}
           SYMBOLIC)
    endif()
  endforeach()

  file(GLOB sources CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/src/${name}/*.cpp)
  add_library(kinema_${name} STATIC ${sources})
  add_library(kinema::${name} ALIAS kinema_${name})
  set_target_properties(kinema_${name} PROPERTIES EXPORT_NAME ${name}
                        POSITION_INDEPENDENT_CODE ON VERSION ${PROJECT_VERSION})
  target_include_directories(kinema_${name}
    PUBLIC $<BUILD_INTERFACE:${view}> $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>
    PRIVATE ${PROJECT_SOURCE_DIR}/src/${name})
  target_compile_features(kinema_${name} PUBLIC cxx_std_20)
  target_compile_options(kinema_${name} PRIVATE ${KINEMA_WARNINGS} ${KINEMA_ARCH})
  if(KINEMA_SANITIZE AND KINEMA_UNITY_BATCHES)
    # The sanitized builds exist only to run the tests, so their library compiles in unity
    # batches too (the release library stays one file at a time: its code and figures are those
    # of the sources as written). A batch makes each source an included file, so GCC's
    # -Wsubobject-linkage (a private Impl holding a type of its .cpp's anonymous namespace) fires
    # where it means nothing.
    set_target_properties(kinema_${name} PROPERTIES UNITY_BUILD ON
                          UNITY_BUILD_BATCH_SIZE ${KINEMA_UNITY_BATCH_SIZE})
    if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")  # clang has no such warning, and refuses the flag
      target_compile_options(kinema_${name} PRIVATE -Wno-subobject-linkage)
    endif()
  endif()
  foreach(dep ${arg_DEPS})
    target_link_libraries(kinema_${name} PUBLIC kinema_${dep})
  endforeach()
  target_link_libraries(kinema_${name} PUBLIC ${arg_PUBLIC_LIBS} PRIVATE ${arg_PRIVATE_LIBS})
  if(KINEMA_SANITIZE)
    # A sanitized static library needs the sanitizer runtimes on every consumer's link line.
    target_link_options(kinema_${name} INTERFACE -fsanitize=address,undefined)
  endif()
  set_property(GLOBAL APPEND PROPERTY KINEMA_MODULES ${name})
endfunction()

# Writes the module graph the build defines, one "module: dependencies" line each, bottom-up, to
# FILE: the architecture test holds it against docs/architecture.md and every #include.
function(kinema_write_module_graph file)
  set(text "")
  get_property(modules GLOBAL PROPERTY KINEMA_MODULES)
  foreach(module ${modules})
    get_property(deps GLOBAL PROPERTY KINEMA_MODULE_DEPS_${module})
    list(JOIN deps " " deps)
    string(APPEND text "${module}: ${deps}\n")
  endforeach()
  file(WRITE ${file} "${text}")
endfunction()
