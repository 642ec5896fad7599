# Unity batches that another clone at another path finds in ccache.
#
# CMake (before 3.32's UNITY_BUILD_RELOCATABLE) writes each unity batch as `#include` lines with
# the sources' absolute paths. ccache hashes a source's text, which CCACHE_BASEDIR does not rewrite,
# so every batch of a clone at a new folder missed the cache. kinema_relocatable_unity_batches()
# makes the same batches itself, naming each source by its path relative to the batch file, and
# turns the target's UNITY_BUILD off: a batch's text, and so its object, is then the same in every
# clone (as long as the build folder sits at the same place inside it, as the presets' build/<name>
# does).
#
# The batches are the ones CMake would make: the target's C++ sources in order, UNITY_BUILD_BATCH_SIZE
# at a time (0: one batch), leaving out those CMake leaves out (SKIP_UNITY_BUILD_INCLUSION, or a
# file's own COMPILE_OPTIONS, COMPILE_DEFINITIONS, COMPILE_FLAGS or INCLUDE_DIRECTORIES) and those
# named with a generator expression (generated files such as learn_plugin_paths_$<CONFIG>.cpp),
# which compile alone. Call it once, after every target and source property is set.

# Every target with UNITY_BUILD on, in `dir` and the folders below it.
function(kinema_unity_targets dir out)
  set(found "")
  get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  foreach(target ${targets})
    get_target_property(type ${target} TYPE)
    if(type MATCHES "^(EXECUTABLE|STATIC_LIBRARY|SHARED_LIBRARY|MODULE_LIBRARY|OBJECT_LIBRARY)$")
      get_target_property(unity ${target} UNITY_BUILD)
      if(unity)
        list(APPEND found ${target})
      endif()
    endif()
  endforeach()
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(subdir ${subdirs})
    kinema_unity_targets(${subdir} below)
    list(APPEND found ${below})
  endforeach()
  set(${out} ${found} PARENT_SCOPE)
endfunction()

# Writes `file` only when its text changes (a rewrite would recompile the batch).
function(kinema_write_if_changed file text)
  set(old "")
  if(EXISTS ${file})
    file(READ ${file} old)
  endif()
  if(NOT old STREQUAL text)
    file(WRITE ${file} "${text}")
  endif()
endfunction()

function(kinema_relocatable_unity_batches)
  kinema_unity_targets(${PROJECT_SOURCE_DIR} targets)
  foreach(target ${targets})
    get_target_property(size ${target} UNITY_BUILD_BATCH_SIZE)
    get_target_property(sources ${target} SOURCES)
    get_target_property(source_dir ${target} SOURCE_DIR)
    get_target_property(binary_dir ${target} BINARY_DIR)
    set(unity_dir ${binary_dir}/unity)
    set(batched "")
    foreach(source ${sources})
      if(NOT source MATCHES "\\.(cpp|cxx|cc)$")
        continue()
      endif()
      if(source MATCHES "\\$<")  # its path is known only when the build is generated: alone
        continue()
      endif()
      if(NOT IS_ABSOLUTE ${source})
        set(source ${source_dir}/${source})
      endif()
      set(alone OFF)
      foreach(property SKIP_UNITY_BUILD_INCLUSION HEADER_FILE_ONLY COMPILE_OPTIONS
                       COMPILE_DEFINITIONS COMPILE_FLAGS INCLUDE_DIRECTORIES)
        get_source_file_property(value ${source} TARGET_DIRECTORY ${target} ${property})
        if(value)
          set(alone ON)
        endif()
      endforeach()
      if(NOT alone)
        list(APPEND batched ${source})
      endif()
    endforeach()
    list(LENGTH batched count)
    if(count EQUAL 0)
      set_target_properties(${target} PROPERTIES UNITY_BUILD OFF)
      continue()
    endif()
    if(NOT size OR size LESS_EQUAL 0)
      set(size ${count})
    endif()
    set(batch_files "")
    set(index 0)
    set(in_batch 0)
    set(text "")
    foreach(source ${batched})
      file(RELATIVE_PATH relative ${unity_dir} ${source})
      string(APPEND text "#include \"${relative}\"\n")
      math(EXPR in_batch "${in_batch} + 1")
      if(in_batch EQUAL size)
        set(file ${unity_dir}/${target}_${index}.cxx)
        kinema_write_if_changed(${file} "/* made by cmake/KinemaUnity.cmake */\n${text}")
        list(APPEND batch_files ${file})
        math(EXPR index "${index} + 1")
        set(in_batch 0)
        set(text "")
      endif()
    endforeach()
    if(in_batch GREATER 0)
      set(file ${unity_dir}/${target}_${index}.cxx)
      kinema_write_if_changed(${file} "/* made by cmake/KinemaUnity.cmake */\n${text}")
      list(APPEND batch_files ${file})
    endif()
    # The batched sources stay listed (editors, the GLOB) but compile only inside their batch.
    set_source_files_properties(${batched} TARGET_DIRECTORY ${target}
                                PROPERTIES HEADER_FILE_ONLY ON)
    target_sources(${target} PRIVATE ${batch_files})
    set_target_properties(${target} PROPERTIES UNITY_BUILD OFF)
  endforeach()
endfunction()
