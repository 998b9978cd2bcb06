// Builds the dependency jar Iceberg's Spark runtime (iceberg-spark-runtime-3.5_2.12, as shipped in
// the snowpark-connect-deps-iceberg wheel) expects but does not contain: Jackson and Apache
// HttpClient 5 relocated under org.apache.iceberg.shaded, the way Iceberg's own build shades them,
// plus an empty TlsSocketStrategy interface, which httpclient5 5.2 lacks and the runtime loads.
// Usage: java -cp asm.jar:asm-commons.jar:. Relocate OUT.jar IN.jar...
import java.io.ByteArrayOutputStream;
import java.io.FileOutputStream;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Enumeration;
import java.util.HashSet;
import java.util.Set;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.jar.JarOutputStream;
import org.objectweb.asm.ClassReader;
import org.objectweb.asm.ClassWriter;
import org.objectweb.asm.Opcodes;
import org.objectweb.asm.commons.ClassRemapper;
import org.objectweb.asm.commons.Remapper;

public class Relocate {
  static final String SHADED = "org/apache/iceberg/shaded/";
  static final String[] PACKAGES = {"com/fasterxml/jackson/", "org/apache/hc/"};

  static String relocate(String name) {
    for (String p : PACKAGES) {
      int at = name.indexOf(p);
      if (at >= 0 && !name.startsWith(SHADED)) {
        return name.substring(0, at) + SHADED + name.substring(at);
      }
    }
    return name;
  }

  static String relocateDotted(String s) {
    return relocate(s.replace('.', '/')).replace('/', '.');
  }

  static final Remapper REMAPPER = new Remapper() {
    @Override
    public String map(String internalName) {
      return relocate(internalName);
    }

    @Override
    public Object mapValue(Object value) {
      if (value instanceof String) {  // class names used reflectively
        String s = (String) value;
        if (s.startsWith("com.fasterxml.jackson.") || s.startsWith("org.apache.hc.")) {
          return relocateDotted(s);
        }
        if (s.startsWith("com/fasterxml/jackson/") || s.startsWith("org/apache/hc/")) {
          return relocate(s);
        }
      }
      return super.mapValue(value);
    }
  };

  static byte[] read(InputStream in) throws Exception {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    in.transferTo(out);
    return out.toByteArray();
  }

  public static void main(String[] args) throws Exception {
    Set<String> seen = new HashSet<>();
    try (JarOutputStream out = new JarOutputStream(new FileOutputStream(args[0]))) {
      for (int i = 1; i < args.length; i++) {
        try (JarFile jar = new JarFile(args[i])) {
          for (Enumeration<JarEntry> e = jar.entries(); e.hasMoreElements(); ) {
            JarEntry entry = e.nextElement();
            String name = entry.getName();
            if (entry.isDirectory() || name.equals("META-INF/MANIFEST.MF") || name.endsWith(".SF")
                || name.endsWith(".RSA") || name.endsWith(".DSA") || name.equals("module-info.class")
                || name.endsWith("/module-info.class")) {
              continue;
            }
            byte[] data = read(jar.getInputStream(entry));
            String target = name;
            if (name.endsWith(".class")) {
              ClassReader reader = new ClassReader(data);
              ClassWriter writer = new ClassWriter(0);
              reader.accept(new ClassRemapper(writer, REMAPPER), 0);
              data = writer.toByteArray();
              target = relocate(name);
            } else if (name.startsWith("META-INF/services/")) {
              target = "META-INF/services/" + relocateDotted(name.substring("META-INF/services/".length()));
              StringBuilder lines = new StringBuilder();
              for (String line : new String(data, StandardCharsets.UTF_8).split("\n")) {
                lines.append(line.trim().isEmpty() || line.startsWith("#") ? line : relocateDotted(line.trim()))
                    .append('\n');
              }
              data = lines.toString().getBytes(StandardCharsets.UTF_8);
            }
            if (seen.add(target)) {
              out.putNextEntry(new JarEntry(target));
              out.write(data);
              out.closeEntry();
            }
          }
        }
      }
      String stub = SHADED + "org/apache/hc/client5/http/ssl/TlsSocketStrategy";
      if (seen.add(stub + ".class")) {
        ClassWriter writer = new ClassWriter(0);
        writer.visit(Opcodes.V11, Opcodes.ACC_PUBLIC | Opcodes.ACC_INTERFACE | Opcodes.ACC_ABSTRACT, stub, null,
            "java/lang/Object", null);
        writer.visitEnd();
        out.putNextEntry(new JarEntry(stub + ".class"));
        out.write(writer.toByteArray());
        out.closeEntry();
      }
    }
  }
}
