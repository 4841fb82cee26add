/**
 * Real compiled Java applications for the scanner's code tests: solr-core 8.9.0 (calls log4j-core 2.13.2,
 * which its grandparent POM pins) laid out as a built Maven project — its published POM as pom.xml and
 * the classes of its published jar as target/classes — in the subjects cache outside the repository.
 * Its dependency jars are those `mvn dependency:list` downloaded into the oracle's local repository.
 */
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { unzipSync } from "fflate";
import { withCacheLock } from "./cache-lock.ts";
import {
  centralFile,
  MAVEN_SUBJECTS_DIR,
  mvnDependencyList,
  ORACLE_REPOSITORY,
  projectDir,
} from "./maven-subjects.ts";

export const SOLR = "org.apache.solr:solr-core:8.9.0";

/** Writes every `.class` entry of a jar under `dir` (once: a marker file says it is complete). */
export async function extractClasses(jar: string, dir: string): Promise<number> {
  const marker = join(dir, ".complete");
  if (existsSync(marker)) return Number(await readFile(marker, "utf8"));
  return withCacheLock(dir, () => extractClassesOnce(jar, dir, marker));
}

/** Extracts the classes unless another test process did while this one waited for the lock. */
async function extractClassesOnce(jar: string, dir: string, marker: string): Promise<number> {
  if (existsSync(marker)) return Number(await readFile(marker, "utf8"));
  await rm(dir, { recursive: true, force: true });
  const entries = unzipSync(await readFile(jar), { filter: (f) => f.name.endsWith(".class") });
  for (const [name, bytes] of Object.entries(entries)) {
    await mkdir(dirname(join(dir, name)), { recursive: true });
    await writeFile(join(dir, name), bytes);
  }
  const count = Object.keys(entries).length;
  await writeFile(`${marker}.part`, String(count));
  await rename(`${marker}.part`, marker);
  return count;
}

/** solr-core 8.9.0 as a built project: `{dir}/pom.xml`, `{dir}/target/classes`, and its resolved local repository. */
export async function builtSolrCore(): Promise<{ dir: string; jar: string; classes: number }> {
  // the oracle's local repository holds the dependency jars once `mvn dependency:list` has run there
  const published = await projectDir("solr-core-8.9.0", { coordinates: SOLR });
  await mvnDependencyList(published.dir);
  const dir = join(MAVEN_SUBJECTS_DIR, "projects", "solr-core-8.9.0-built");
  await mkdir(dir, { recursive: true });
  if (!existsSync(join(dir, "pom.xml"))) await writeFile(join(dir, "pom.xml"), await readFile(published.pom));
  const jar = await centralFile(SOLR, "jar");
  const classes = await extractClasses(jar, join(dir, "target", "classes"));
  return { dir, jar, classes };
}

const m2 = (path: string) => join(ORACLE_REPOSITORY, path);
export const LOG4J_CORE = m2("org/apache/logging/log4j/log4j-core/2.14.1/log4j-core-2.14.1.jar");
export const LOG4J_API = m2("org/apache/logging/log4j/log4j-api/2.14.1/log4j-api-2.14.1.jar");
export const COMMONS_LOGGING = m2("commons-logging/commons-logging/1.2/commons-logging-1.2.jar");
export const JCL_OVER_SLF4J = m2("org/slf4j/jcl-over-slf4j/1.7.24/jcl-over-slf4j-1.7.24.jar");

/** An application class calling log4j-core, log4j-api and commons-logging (compiled by javac in tests). */
export const LOGGING_SETUP_SOURCE = `package com.example.app;

import org.apache.commons.logging.LogFactory;
import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.core.LoggerContext;
import org.apache.logging.log4j.core.config.Configurator;

public class LoggingSetup {
  public static void init() {
    LoggerContext context = LoggerContext.getContext(false);
    context.getConfiguration().getRootLogger().setLevel(Level.INFO);
    context.updateLoggers();
    Configurator.setRootLevel(Level.DEBUG);
    LogFactory.getLog(LoggingSetup.class).info("ready");
  }

  public Runnable later() {
    return LoggerContext::getContext;
  }
}
`;

/** The POM of a project holding that class: log4j-core 2.14.1 (affected by CVE-2021-44228). */
export const LOGGING_APP_POM = `<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>com.example</groupId>
  <artifactId>logging-app</artifactId>
  <version>1.0.0</version>
  <dependencies>
    <dependency>
      <groupId>org.apache.logging.log4j</groupId>
      <artifactId>log4j-core</artifactId>
      <version>2.14.1</version>
    </dependency>
  </dependencies>
</project>
`;

/**
 * A small Maven project as its build leaves it: pom.xml, src/main/java and target/classes compiled by
 * javac (Java 8 class files) against the real jars of the oracle's local repository.
 */
export async function builtLoggingApp(dir: string): Promise<void> {
  await loggingJars();
  const sources = join(dir, "src", "main", "java", "com", "example", "app");
  await mkdir(sources, { recursive: true });
  await writeFile(join(dir, "pom.xml"), LOGGING_APP_POM);
  await writeFile(join(sources, "LoggingSetup.java"), LOGGING_SETUP_SOURCE);
  // C1 only and the serial GC: a short javac's JIT and GC threads cost about 40 % of its CPU (0.9 → 0.55 s
  // here); the class files are byte for byte the same.
  execFileSync("javac", [
    "-J-XX:TieredStopAtLevel=1",
    "-J-XX:+UseSerialGC",
    "--release",
    "8",
    "-cp",
    [LOG4J_CORE, LOG4J_API, COMMONS_LOGGING].join(":"),
    "-d",
    join(dir, "target", "classes"),
    join(sources, "LoggingSetup.java"),
  ]);
}

const LOGGING_JARS_POM = `<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>com.example</groupId>
  <artifactId>java-logging-jars</artifactId>
  <version>1.0.0</version>
  <dependencies>
    <dependency><groupId>org.apache.logging.log4j</groupId><artifactId>log4j-core</artifactId><version>2.14.1</version></dependency>
    <dependency><groupId>commons-logging</groupId><artifactId>commons-logging</artifactId><version>1.2</version></dependency>
    <dependency><groupId>org.slf4j</groupId><artifactId>jcl-over-slf4j</artifactId><version>1.7.24</version></dependency>
  </dependencies>
</project>
`;

/**
 * Puts the jars and POMs of log4j-core/log4j-api 2.14.1, commons-logging 1.2 and jcl-over-slf4j 1.7.24 into
 * the oracle's local repository (Maven downloads them while resolving a project declaring them; once).
 */
export async function loggingJars(): Promise<void> {
  const { dir } = await projectDir("java-logging-jars", { pomXml: LOGGING_JARS_POM });
  await mvnDependencyList(dir);
}

/**
 * A Spring Boot 2.7.18 application as its quick starts make one: spring-boot-starter-web, log4j2 instead of
 * logback (pinned to 2.14.1, affected by CVE-2021-44228), commons-text 1.9 (CVE-2022-42889), one class
 * calling both; packaged by spring-boot-maven-plugin as a "fully executable" jar (a launch script before
 * the zip data).
 */
export const SPRING_BOOT_APP_POM = `<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <parent>
    <groupId>org.springframework.boot</groupId>
    <artifactId>spring-boot-starter-parent</artifactId>
    <version>2.7.18</version>
    <relativePath/>
  </parent>
  <groupId>com.example</groupId>
  <artifactId>greeting-service</artifactId>
  <version>1.0.0</version>
  <properties>
    <java.version>17</java.version>
    <log4j2.version>2.14.1</log4j2.version>
  </properties>
  <dependencies>
    <dependency>
      <groupId>org.springframework.boot</groupId>
      <artifactId>spring-boot-starter-web</artifactId>
      <exclusions>
        <exclusion><groupId>org.springframework.boot</groupId><artifactId>spring-boot-starter-logging</artifactId></exclusion>
      </exclusions>
    </dependency>
    <dependency>
      <groupId>org.springframework.boot</groupId>
      <artifactId>spring-boot-starter-log4j2</artifactId>
    </dependency>
    <dependency>
      <groupId>org.apache.commons</groupId>
      <artifactId>commons-text</artifactId>
      <version>1.9</version>
    </dependency>
  </dependencies>
  <build>
    <plugins>
      <plugin>
        <groupId>org.springframework.boot</groupId>
        <artifactId>spring-boot-maven-plugin</artifactId>
        <configuration><executable>true</executable></configuration>
      </plugin>
    </plugins>
  </build>
</project>
`;

const SPRING_BOOT_APP_SOURCE = `package com.example.greeting;

import java.util.Map;
import org.apache.commons.text.StringSubstitutor;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

@SpringBootApplication
@RestController
public class GreetingApplication {
  private static final Logger LOG = LogManager.getLogger(GreetingApplication.class);

  public static void main(String[] args) {
    SpringApplication.run(GreetingApplication.class, args);
  }

  @GetMapping("/greet")
  public String greet(@RequestParam String name) {
    LOG.info("greeting {}", name);
    return new StringSubstitutor(Map.of("name", name)).replace("Hello, \${name}!");
  }
}
`;

/**
 * Builds that application with Maven (once; its local repository is the oracle's) and returns the
 * executable jar, its project directory and what `mvn dependency:list` resolves for it.
 */
export async function builtSpringBootApp(): Promise<{ dir: string; jar: string }> {
  const dir = join(MAVEN_SUBJECTS_DIR, "projects", "spring-boot-executable-app");
  const jar = join(dir, "target", "greeting-service-1.0.0.jar");
  if (!existsSync(join(dir, ".built"))) {
    await withCacheLock(dir, async () => {
      if (existsSync(join(dir, ".built"))) return;
      const sources = join(dir, "src", "main", "java", "com", "example", "greeting");
      await mkdir(sources, { recursive: true });
      await writeFile(join(dir, "pom.xml"), SPRING_BOOT_APP_POM);
      await writeFile(join(sources, "GreetingApplication.java"), SPRING_BOOT_APP_SOURCE);
      execFileSync("mvn", ["-B", "-q", `-Dmaven.repo.local=${ORACLE_REPOSITORY}`, "-DskipTests", "package"], {
        cwd: dir,
        stdio: ["ignore", "pipe", "pipe"],
        maxBuffer: 64 * 1024 * 1024,
      });
      await writeFile(join(dir, ".built"), "");
    });
  }
  return { dir, jar };
}
