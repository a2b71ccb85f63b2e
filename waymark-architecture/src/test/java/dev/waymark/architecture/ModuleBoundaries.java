package dev.waymark.architecture;

import com.tngtech.archunit.core.domain.Dependency;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.lang.ArchCondition;
import com.tngtech.archunit.lang.ArchRule;
import com.tngtech.archunit.lang.ConditionEvents;
import com.tngtech.archunit.lang.SimpleConditionEvent;
import com.tngtech.archunit.lang.syntax.ArchRuleDefinition;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * The rule "no class outside module M depends on a class of M's internal packages", over compiled
 * classes read from the modules' build directories. The module of a class is the Maven module whose
 * {@code target/classes} or {@code target/test-classes} holds it; an internal package is one with a
 * segment {@code internal} ({@code dev.waymark.store.internal}, {@code dev.waymark.subscription.shard.internal}).
 */
final class ModuleBoundaries {

    private ModuleBoundaries() {}

    /** One module's directories of compiled classes. */
    record Module(String name, List<Path> classDirectories) {}

    /**
     * Every Maven module under {@code root} (a directory named {@code waymark-*} with a pom.xml) except
     * {@code self}, with the class directories its sources compile to.
     *
     * @throws IllegalStateException when a module has sources but not their compiled classes: the rule
     *     would silently check less than the repository holds
     */
    static List<Module> modules(Path root, String self) {
        List<Module> modules = new ArrayList<>();
        try (Stream<Path> children = Files.list(root)) {
            for (Path dir : children.sorted().toList()) {
                String name = dir.getFileName().toString();
                if (!name.startsWith("waymark-") || name.equals(self) || !Files.exists(dir.resolve("pom.xml"))) {
                    continue;
                }
                List<Path> classes = new ArrayList<>();
                add(dir, "main", "classes", classes);
                add(dir, "test", "test-classes", classes);
                if (!classes.isEmpty()) {
                    modules.add(new Module(name, classes));
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return modules;
    }

    private static void add(Path module, String sourceSet, String output, List<Path> into) {
        Path sources = module.resolve("src").resolve(sourceSet).resolve("java");
        if (!Files.isDirectory(sources)) {
            return;
        }
        Path classes = module.resolve("target").resolve(output);
        if (!Files.isDirectory(classes)) {
            throw new IllegalStateException(module.getFileName() + " has " + sources + " but no " + classes
                    + ": build it first (mvn -pl waymark-architecture -am verify builds every module)");
        }
        into.add(classes.toAbsolutePath().normalize());
    }

    /** The classes of {@code modules}, each remembering where it was read from. */
    static JavaClasses importClasses(List<Module> modules) {
        List<Path> paths = modules.stream().flatMap(m -> m.classDirectories().stream()).toList();
        return new ClassFileImporter().importPaths(paths);
    }

    /** The rule over {@code modules}. */
    static ArchRule noCrossModuleInternalDependency(List<Module> modules) {
        return ArchRuleDefinition.classes()
                .that()
                .resideInAPackage("dev.waymark..")
                .should(new ArchCondition<JavaClass>("depend only on the internal packages of their own module") {
                    @Override
                    public void check(JavaClass origin, ConditionEvents events) {
                        Optional<String> from = moduleOf(origin, modules);
                        if (from.isEmpty()) {
                            return;
                        }
                        for (Dependency d : origin.getDirectDependenciesFromSelf()) {
                            JavaClass target = d.getTargetClass();
                            if (!isInternal(target.getPackageName())) {
                                continue;
                            }
                            Optional<String> to = moduleOf(target, modules);
                            if (to.isPresent() && !to.equals(from)) {
                                events.add(SimpleConditionEvent.violated(
                                        d,
                                        from.get() + " depends on " + to.get() + "'s internal "
                                                + target.getName() + ": " + d.getDescription()));
                            }
                        }
                    }
                });
    }

    static boolean isInternal(String packageName) {
        return ("." + packageName + ".").contains(".internal.");
    }

    /** The module that holds {@code c}'s class file, if it was read from one of {@code modules}. */
    static Optional<String> moduleOf(JavaClass c, List<Module> modules) {
        if (c.getSource().isEmpty()) {
            return Optional.empty();
        }
        URI uri = c.getSource().get().getUri();
        if (!"file".equals(uri.getScheme())) {
            return Optional.empty();
        }
        Path file = Path.of(uri).toAbsolutePath().normalize();
        for (Module m : modules) {
            for (Path dir : m.classDirectories()) {
                if (file.startsWith(dir)) {
                    return Optional.of(m.name());
                }
            }
        }
        return Optional.empty();
    }
}
